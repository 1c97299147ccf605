import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { migrate } from '@outreach/platform';
import { Pool } from 'pg';
import { createTestDatabase } from '../../test/support/isolation';
import { recordUsageBatch, type Usage } from '../src/usage/usage.consumer';

const MIGRATIONS = path.resolve(__dirname, '../migrations');

let db: { url: string; drop: () => Promise<void> };
let pool: Pool;
const pools: Pool[] = [];

/** A pool whose tables are those of `schema` (each test migrates a schema of its own). */
function poolFor(schema: string): Pool {
  const url = new URL(db.url);
  url.searchParams.set('options', `-c search_path=${schema}`);
  const made = new Pool({ connectionString: url.toString(), max: 3 });
  pools.push(made);
  return made;
}

/** Migrates `schema` with the migrations before `version` only, as the previous version left it. */
async function migrateBefore(on: Pool, schema: string, version: string): Promise<void> {
  const before = mkdtempSync(path.join(tmpdir(), 'migrations-'));
  for (const file of readdirSync(MIGRATIONS).filter((f) => f < version)) {
    copyFileSync(path.join(MIGRATIONS, file), path.join(before, file));
  }
  await migrate(on, schema, before);
  rmSync(before, { recursive: true });
}

beforeAll(async () => {
  db = await createTestDatabase();
  pool = poolFor('campaigns');
});

afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await db.drop();
});

const usage = (
  conversationId: string,
  campaignId: string,
  startedAt = '2026-05-01T10:00:00.000Z',
): Usage => ({
  conversationId,
  campaignId,
  projectId: 'prj_m',
  recipientId: 'rcp_m',
  startedAt: new Date(startedAt),
});

/** Each campaign's kept total next to a count of its ledger. */
async function totalsAndCounts(): Promise<{ kept: Record<string, number>; counted: Record<string, number> }> {
  const kept = await pool.query<{ campaign_id: string; used: string }>(
    'SELECT campaign_id, used FROM campaign_usage WHERE used > 0',
  );
  const counted = await pool.query<{ campaign_id: string; n: string }>(
    'SELECT campaign_id, count(*) AS n FROM conversations GROUP BY campaign_id',
  );
  return {
    kept: Object.fromEntries(kept.rows.map((r) => [r.campaign_id, Number(r.used)])),
    counted: Object.fromEntries(counted.rows.map((r) => [r.campaign_id, Number(r.n)])),
  };
}

describe('011_campaign_usage_totals', () => {
  it('counts the ledger written before it, then keeps every campaign total with the ledger', async () => {
    // The migrations before 011, then a ledger as the previous version left it.
    await migrateBefore(pool, 'campaigns', '011');
    await recordUsageBatch(pool, [usage('cnv_1', 'cmp_a'), usage('cnv_2', 'cmp_a'), usage('cnv_3', 'cmp_b')]);

    await migrate(pool, 'campaigns', MIGRATIONS);
    expect((await totalsAndCounts()).kept).toEqual({ cmp_a: 2, cmp_b: 1 });

    // This version's writes: a repeated id (in the batch and from before) counts once.
    await recordUsageBatch(pool, [
      usage('cnv_4', 'cmp_a'),
      usage('cnv_4', 'cmp_a'),
      usage('cnv_1', 'cmp_a'),
      usage('cnv_5', 'cmp_c'),
    ]);
    // Concurrent batches, as two consumer instances write them.
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        recordUsageBatch(
          pool,
          Array.from({ length: 25 }, (_, j) => usage(`cnv_p${i}_${j}`, j % 2 ? 'cmp_b' : 'cmp_c')),
        ),
      ),
    );
    // A correction that deletes ledger rows takes them off the totals too.
    await pool.query("DELETE FROM conversations WHERE conversation_id IN ('cnv_2', 'cnv_p0_1')");
    const { kept, counted } = await totalsAndCounts();
    expect(kept).toEqual(counted);
    expect(kept).toEqual({ cmp_a: 2, cmp_b: 1 + 8 * 12 - 1, cmp_c: 1 + 8 * 13 });
  });
});

describe('012_campaign_usage_quarters', () => {
  /** Each campaign's kept quarter-hour counts next to the ledger counted by quarter hour. */
  async function quartersAndLedger(on: Pool) {
    const kept = await on.query<{ campaign_id: string; quarter: Date; n: string }>(
      'SELECT campaign_id, quarter, conversations AS n FROM campaign_usage_quarters WHERE conversations > 0',
    );
    const counted = await on.query<{ campaign_id: string; quarter: Date; n: string }>(
      `SELECT campaign_id, to_timestamp(floor(extract(epoch FROM started_at) / 900) * 900) AS quarter, count(*) AS n
         FROM conversations GROUP BY 1, 2`,
    );
    const keyed = (rows: { campaign_id: string; quarter: Date; n: string }[]) =>
      Object.fromEntries(rows.map((r) => [`${r.campaign_id} ${r.quarter.toISOString()}`, Number(r.n)]));
    return { kept: keyed(kept.rows), counted: keyed(counted.rows) };
  }

  it('counts the ledger written before it by quarter hour, then keeps the counts with the ledger', async () => {
    const schema = 'campaigns_012';
    const on = poolFor(schema);
    await migrateBefore(on, schema, '012');
    await recordUsageBatch(on, [
      usage('cnv_1', 'cmp_a', '2026-05-01T10:00:00.000Z'),
      usage('cnv_2', 'cmp_a', '2026-05-01T10:14:59.999Z'),
      usage('cnv_3', 'cmp_a', '2026-05-01T10:15:00.000Z'),
      usage('cnv_4', 'cmp_b', '2026-04-30T23:59:00.000Z'),
    ]);

    await migrate(on, schema, MIGRATIONS);
    expect((await quartersAndLedger(on)).kept).toEqual({
      'cmp_a 2026-05-01T10:00:00.000Z': 2,
      'cmp_a 2026-05-01T10:15:00.000Z': 1,
      'cmp_b 2026-04-30T23:45:00.000Z': 1,
    });

    // This version's writes: repeated ids count once; concurrent batches; a correction deleting rows.
    await recordUsageBatch(on, [
      usage('cnv_5', 'cmp_a', '2026-05-01T10:29:00.000Z'),
      usage('cnv_5', 'cmp_a', '2026-05-01T10:29:00.000Z'),
      usage('cnv_1', 'cmp_a', '2026-05-01T10:00:00.000Z'),
    ]);
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        recordUsageBatch(
          on,
          Array.from({ length: 25 }, (_, j) =>
            usage(
              `cnv_p${i}_${j}`,
              j % 2 ? 'cmp_b' : 'cmp_c',
              new Date(Date.UTC(2026, 4, 2, 0, 7 * j)).toISOString(),
            ),
          ),
        ),
      ),
    );
    await on.query("DELETE FROM conversations WHERE conversation_id IN ('cnv_2', 'cnv_p0_1')");
    const { kept, counted } = await quartersAndLedger(on);
    expect(kept).toEqual(counted);
    expect(kept['cmp_a 2026-05-01T10:00:00.000Z']).toBe(1);
    expect(kept['cmp_a 2026-05-01T10:15:00.000Z']).toBe(2);
    // 4 from before, cnv_5, 200 concurrent, 2 deleted.
    expect(Object.values(kept).reduce((t, n) => t + n, 0)).toBe(4 + 1 + 200 - 2);
  });
});
