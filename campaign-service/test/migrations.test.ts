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

beforeAll(async () => {
  db = await createTestDatabase();
  const url = new URL(db.url);
  url.searchParams.set('options', '-c search_path=campaigns');
  pool = new Pool({ connectionString: url.toString(), max: 3 });
});

afterAll(async () => {
  await pool.end();
  await db.drop();
});

const usage = (conversationId: string, campaignId: string): Usage => ({
  conversationId,
  campaignId,
  projectId: 'prj_m',
  recipientId: 'rcp_m',
  startedAt: new Date('2026-05-01T10:00:00.000Z'),
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
    const before = mkdtempSync(path.join(tmpdir(), 'migrations-'));
    for (const file of readdirSync(MIGRATIONS).filter((f) => f < '011')) {
      copyFileSync(path.join(MIGRATIONS, file), path.join(before, file));
    }
    await migrate(pool, 'campaigns', before);
    rmSync(before, { recursive: true });
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
