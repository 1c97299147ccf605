import path from 'node:path';
import { migrate } from '@outreach/platform';
import { Pool } from 'pg';
import { createTestDatabase } from '../../test/support/isolation';
import { insertConversations, listUnconfirmed } from '../src/admission/conversations.repository';

const MIGRATIONS = path.resolve(__dirname, '../migrations');

let db: { url: string; drop: () => Promise<void> };
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase();
  pool = new Pool({ connectionString: db.url });
  await migrate(pool, 'link', MIGRATIONS);
});

afterAll(async () => {
  await pool.end();
  await db.drop();
});

describe('002_usage_batches (expand only)', () => {
  it('leaves the previous version able to write, mark and sweep its conversations', async () => {
    // The previous version's statements, verbatim.
    await pool.query(
      `INSERT INTO link.conversations (id, recipient_id, campaign_id, project_id, started_at)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[])
       ON CONFLICT (id) DO NOTHING`,
      [
        ['cnv_old_1', 'cnv_old_2'],
        ['rcp_1', 'rcp_1'],
        ['cmp_1', 'cmp_1'],
        ['prj_1', 'prj_1'],
        [new Date(), new Date()],
      ],
    );
    await pool.query('UPDATE link.conversations SET published_at = $2 WHERE id = ANY($1::text[])', [
      ['cnv_old_1'],
      new Date(),
    ]);
    const swept = await pool.query(
      `SELECT id FROM link.conversations WHERE published_at IS NULL AND started_at < $1 ORDER BY started_at LIMIT $2`,
      [new Date(Date.now() + 1000), 200],
    );
    expect(swept.rows.map((r) => r.id)).toEqual(['cnv_old_2']);
  });

  it("keeps this version's rows out of the previous version's sweep", async () => {
    const at = new Date();
    await insertConversations(
      pool,
      [{ id: 'cnv_new_1', recipientId: 'rcp_2', campaignId: 'cmp_2', projectId: 'prj_2', startedAt: at }],
      { id: 'usb_1', event: '{}', createdAt: at },
    );
    const { rows } = await pool.query('SELECT published_at FROM link.conversations WHERE id = $1', [
      'cnv_new_1',
    ]);
    expect(rows[0].published_at).toEqual(at);
    expect((await pool.query('SELECT id FROM link.usage_batches')).rows).toEqual([{ id: 'usb_1' }]);
  });
});

describe('004_usage_batches_kept', () => {
  it("leaves the previous version's sweep and confirmation working, and this version's sweep taking its rows", async () => {
    const at = new Date(Date.now() - 60_000);
    await pool.query(
      `INSERT INTO link.usage_batches (id, event, created_at) VALUES ('usb_prev_1', '{}', $1), ('usb_prev_2', '{}', $1)`,
      [at],
    );
    // The previous version's statements, verbatim: its sweep lists both, its confirmation deletes.
    const swept = await pool.query(
      'SELECT id, event, created_at FROM link.usage_batches WHERE created_at < $1 ORDER BY created_at LIMIT $2',
      [new Date(), 200],
    );
    expect(swept.rows.map((r) => r.id)).toEqual(expect.arrayContaining(['usb_prev_1', 'usb_prev_2']));
    await pool.query('DELETE FROM link.usage_batches WHERE id = ANY($1::text[])', [['usb_prev_1']]);
    // What it wrote and never saw confirmed is unconfirmed to this version, which republishes it.
    const listed = (await listUnconfirmed(pool, new Date(), 200)).map((b) => b.id);
    expect(listed).toContain('usb_prev_2');
    expect(listed).not.toContain('usb_prev_1');
    // Its sweep still finds the oldest rows by index, however many kept rows the table holds.
    const indexes = await pool.query(
      "SELECT indexname FROM pg_indexes WHERE schemaname = 'link' AND tablename = 'usage_batches'",
    );
    expect(indexes.rows.map((r) => r.indexname)).toContain('usage_batches_created');
  });
});
