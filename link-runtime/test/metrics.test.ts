import path from 'node:path';
import { migrate } from '@outreach/platform';
import { Pool } from 'pg';
import { Registry } from 'prom-client';
import { createTestDatabase } from '../../test/support/isolation';
import { unconfirmForReplay } from '../src/admission/conversations.repository';
import { registerUsageOutbox } from '../src/metrics';

let db: { url: string; drop: () => Promise<void> };
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase();
  pool = new Pool({ connectionString: db.url });
  await migrate(pool, 'link', path.resolve(__dirname, '../migrations'));
});

afterAll(async () => {
  await pool.end();
  await db.drop();
});

describe('usage outbox gauges', () => {
  it('count the unconfirmed usage events and age the oldest, read when scraped', async () => {
    const now = new Date('2026-05-01T10:00:00.000Z');
    const registry = new Registry();
    registerUsageOutbox(registry, pool, () => now);
    const value = async (name: string) => (await registry.getSingleMetric(name)?.get())?.values[0]?.value;

    expect(await value('link_usage_unconfirmed_batches')).toBe(0);
    expect(await value('link_usage_unconfirmed_oldest_seconds')).toBe(0);

    await pool.query(
      'INSERT INTO link.usage_batches (id, event, created_at) VALUES ($1, $2, $3), ($4, $2, $5)',
      ['usb_a', '{}', new Date(now.getTime() - 90_000), 'usb_b', new Date(now.getTime() - 5_000)],
    );
    expect(await value('link_usage_unconfirmed_batches')).toBe(2);
    expect(await value('link_usage_unconfirmed_oldest_seconds')).toBe(90);
    expect(await value('link_usage_replay_batches')).toBe(0);
  });

  it('count the batches a replay publishes again apart, so their age does not set off the alert', async () => {
    const now = new Date('2026-05-01T10:00:00.000Z');
    const registry = new Registry();
    registerUsageOutbox(registry, pool, () => now);
    const value = async (name: string) => (await registry.getSingleMetric(name)?.get())?.values[0]?.value;
    await pool.query('DELETE FROM link.usage_batches');
    await pool.query(
      `INSERT INTO link.usage_batches (id, event, created_at, confirmed_at)
       VALUES ('usb_kept1', '{}', $1, $1), ('usb_kept2', '{}', $1, $1), ('usb_new', '{}', $2, NULL)`,
      [new Date(now.getTime() - 20 * 3600_000), new Date(now.getTime() - 30_000)],
    );
    expect(await unconfirmForReplay(pool, 'events', new Date(now.getTime() - 60_000))).toBe(2);

    expect(await value('link_usage_replay_batches')).toBe(2);
    expect(await value('link_usage_unconfirmed_batches')).toBe(1);
    expect(await value('link_usage_unconfirmed_oldest_seconds')).toBe(30);
  });
});
