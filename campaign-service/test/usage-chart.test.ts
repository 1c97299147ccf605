import path from 'node:path';
import { migrate } from '@outreach/platform';
import { Pool } from 'pg';
import { createTestDatabase } from '../../test/support/isolation';
import { conversationsOverTime } from '../src/dashboard/usage-chart';
import { recordUsageBatch } from '../src/usage/usage.consumer';

let db: { url: string; drop: () => Promise<void> };
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase();
  const url = new URL(db.url);
  url.searchParams.set('options', '-c search_path=campaigns');
  pool = new Pool({ connectionString: url.toString(), max: 3 });
  await migrate(pool, 'campaigns', path.resolve(__dirname, '../migrations'));
});

afterAll(async () => {
  await pool.end();
  await db.drop();
});

describe('conversationsOverTime', () => {
  it('counts per local hour and day exactly as grouping every conversation would, in any time zone', async () => {
    // Starts every 7 minutes for three days and a bit, across every quarter-hour offset in use
    // and a 30-minute DST change (Lord Howe, 2026-04-05); another campaign's starts are not counted.
    const starts = Array.from({ length: 700 }, (_, i) => new Date(Date.UTC(2026, 3, 3, 0, 7 * i, i % 60)));
    const usage = (i: number, at: Date, campaignId = 'cmp_chart') => ({
      conversationId: `cnv_${campaignId}_${i}`,
      campaignId,
      projectId: 'prj_chart',
      recipientId: `rcp_${i % 5}`,
      startedAt: at,
    });
    await recordUsageBatch(
      pool,
      starts.map((at, i) => usage(i, at)),
    );
    await recordUsageBatch(
      pool,
      starts.slice(0, 50).map((at, i) => usage(i, at, 'cmp_other')),
    );

    for (const timeZone of [
      'UTC',
      'Asia/Kathmandu',
      'America/St_Johns',
      'Australia/Lord_Howe',
      'Pacific/Chatham',
    ]) {
      for (const bucket of ['hour', 'day'] as const) {
        const { rows } = await pool.query<{ at: string; count: string }>(
          `SELECT to_char(date_trunc($2, started_at AT TIME ZONE $3), 'YYYY-MM-DD"T"HH24:MI') AS at, count(*) AS count
             FROM conversations WHERE campaign_id = $1 GROUP BY 1 ORDER BY 1`,
          ['cmp_chart', bucket, timeZone],
        );
        const points = await conversationsOverTime(pool, 'cmp_chart', bucket, timeZone);
        expect(points).toEqual(rows.map((r) => ({ at: r.at, count: Number(r.count) })));
        expect(points.reduce((t, p) => t + p.count, 0)).toBe(700);
      }
    }
  });

  it('shows nothing for a campaign without conversations', async () => {
    expect(await conversationsOverTime(pool, 'cmp_none', 'day', 'UTC')).toEqual([]);
  });
});
