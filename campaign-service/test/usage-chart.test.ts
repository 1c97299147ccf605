import path from 'node:path';
import { migrate } from '@outreach/platform';
import { Pool } from 'pg';
import { createTestDatabase } from '../../test/support/isolation';
import { barChart, CHART_BUCKETS, conversationsOverTime } from '../src/dashboard/usage-chart';
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
        // Every local hour has a start, so there is no gap to fill; the 82 hours are more than
        // the chart's buckets, and only the last are kept.
        const points = await conversationsOverTime(pool, 'cmp_chart', bucket, timeZone);
        expect(points).toEqual(rows.map((r) => ({ at: r.at, count: Number(r.count) })).slice(-CHART_BUCKETS));
        if (bucket === 'day') expect(points.reduce((t, p) => t + p.count, 0)).toBe(700);
      }
    }
  });

  const startsAt = async (campaignId: string, starts: Date[]) =>
    recordUsageBatch(
      pool,
      starts.map((startedAt, i) => ({
        conversationId: `cnv_${campaignId}_${i}`,
        campaignId,
        projectId: 'prj_chart',
        recipientId: 'rcp_0',
        startedAt,
      })),
    );

  it('gives every day and hour between the first and the last conversation, those without any as zero', async () => {
    await startsAt('cmp_gaps_day', [
      new Date('2026-04-01T10:00:00Z'),
      new Date('2026-04-01T11:00:00Z'),
      new Date('2026-04-02T23:59:00Z'),
      new Date('2026-04-20T00:00:00Z'),
    ]);
    const days = await conversationsOverTime(pool, 'cmp_gaps_day', 'day', 'UTC');
    expect(days).toHaveLength(20);
    expect(days[0]).toEqual({ at: '2026-04-01T00:00', count: 2 });
    expect(days[1]).toEqual({ at: '2026-04-02T00:00', count: 1 });
    expect(days.slice(2, 19)).toEqual(
      Array.from({ length: 17 }, (_, i) => ({
        at: `2026-04-${String(3 + i).padStart(2, '0')}T00:00`,
        count: 0,
      })),
    );
    expect(days[19]).toEqual({ at: '2026-04-20T00:00', count: 1 });

    await startsAt('cmp_gaps_hour', [
      new Date('2026-04-01T09:10:00Z'),
      new Date('2026-04-01T10:50:00Z'),
      new Date('2026-04-02T18:00:00Z'),
    ]);
    const hours = await conversationsOverTime(pool, 'cmp_gaps_hour', 'hour', 'UTC');
    expect(hours.map((p) => p.at)).toEqual(
      Array.from({ length: 34 }, (_, i) => new Date(Date.UTC(2026, 3, 1, 9 + i)).toISOString().slice(0, 16)),
    );
    expect(hours.map((p) => p.count).filter((n) => n > 0)).toEqual([1, 1, 1]);
    expect(hours[33].count).toBe(1);
  });

  it('gives each local hour once when clocks change: none for the hour skipped, one for the hour repeated', async () => {
    // Berlin: 2026-03-29 02:00 does not happen; 2026-10-25 02:00 happens twice.
    await startsAt('cmp_dst_spring', [new Date('2026-03-28T23:30:00Z'), new Date('2026-03-29T02:30:00Z')]);
    expect(await conversationsOverTime(pool, 'cmp_dst_spring', 'hour', 'Europe/Berlin')).toEqual([
      { at: '2026-03-29T00:00', count: 1 },
      { at: '2026-03-29T01:00', count: 0 },
      { at: '2026-03-29T03:00', count: 0 },
      { at: '2026-03-29T04:00', count: 1 },
    ]);
    await startsAt('cmp_dst_autumn', [
      new Date('2026-10-24T23:30:00Z'),
      new Date('2026-10-25T00:30:00Z'),
      new Date('2026-10-25T01:30:00Z'),
    ]);
    expect(await conversationsOverTime(pool, 'cmp_dst_autumn', 'hour', 'Europe/Berlin')).toEqual([
      { at: '2026-10-25T01:00', count: 1 },
      { at: '2026-10-25T02:00', count: 2 },
    ]);
  });

  it('keeps only the last buckets of a long campaign, the first of them whole', async () => {
    // A conversation every 6 hours from 1 January to 10 April, and a last one alone on 20 April.
    const every6h = Array.from({ length: 400 }, (_, i) => new Date(Date.UTC(2026, 0, 1, 6 * i)));
    await startsAt('cmp_long', [...every6h, new Date(Date.UTC(2026, 3, 20, 12))]);
    const days = await conversationsOverTime(pool, 'cmp_long', 'day', 'UTC');
    expect(days).toHaveLength(CHART_BUCKETS);
    expect(days[0]).toEqual({ at: '2026-03-04T00:00', count: 4 });
    expect(days.at(-1)).toEqual({ at: '2026-04-20T00:00', count: 1 });
    expect(days.filter((p) => p.count === 0).map((p) => p.at.slice(5, 10))).toEqual(
      Array.from({ length: 9 }, (_, i) => `04-${String(11 + i).padStart(2, '0')}`),
    );
  });

  it('charts one bar for each of the last buckets, and lists those same buckets in the figures table', () => {
    const points = Array.from({ length: 60 }, (_, i) => ({
      at: new Date(Date.UTC(2026, 3, 1 + i)).toISOString().slice(0, 16),
      count: i % 7 === 0 ? 0 : i,
    }));
    const chart = String(barChart(points, 'day', 'UTC'));
    expect(chart.match(/<rect class="bar"/g)).toHaveLength(CHART_BUCKETS);
    const rows = [...chart.matchAll(/<tr><td>([^<]+)<\/td><td class="num">(\d+)<\/td><\/tr>/g)];
    expect(rows.map((m) => ({ at: m[1].replace(' ', 'T'), count: Number(m[2]) }))).toEqual(
      points.slice(-CHART_BUCKETS),
    );
  });

  it('shows nothing for a campaign without conversations', async () => {
    expect(await conversationsOverTime(pool, 'cmp_none', 'day', 'UTC')).toEqual([]);
  });
});
