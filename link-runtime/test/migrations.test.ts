import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { admittedConversations, type UsageAdmittedBatch } from '@outreach/contracts';
import { migrate } from '@outreach/platform';
import { Pool } from 'pg';
import { createTestDatabase } from '../../test/support/isolation';

const MIGRATIONS = path.resolve(__dirname, '../migrations');

let db: { url: string; drop: () => Promise<void> };
let pool: Pool;
let before: string;

beforeAll(async () => {
  db = await createTestDatabase();
  pool = new Pool({ connectionString: db.url });
  before = mkdtempSync(path.join(tmpdir(), 'link-migrations-'));
  copyFileSync(path.join(MIGRATIONS, '001_conversations.sql'), path.join(before, '001_conversations.sql'));
});

afterAll(async () => {
  rmSync(before, { recursive: true, force: true });
  await pool.end();
  await db.drop();
});

describe('002_usage_batches', () => {
  it('turns each conversation whose event was never confirmed into a batch of its own', async () => {
    await migrate(pool, 'link', before);
    await pool.query(
      `INSERT INTO link.conversations (id, recipient_id, campaign_id, project_id, started_at, published_at)
       VALUES ('cnv_sent', 'rcp_1', 'cmp_1', 'prj_1', '2026-05-01T10:00:00.123Z', '2026-05-01T10:00:01Z'),
              ('cnv_unsent', 'rcp_1', 'cmp_1', 'prj_1', '2026-05-01T10:00:02.456Z', NULL)`,
    );

    expect(await migrate(pool, 'link', MIGRATIONS)).toContain('002_usage_batches.sql');

    const { rows } = await pool.query<{ id: string; event: string; created_at: Date }>(
      'SELECT id, event, created_at FROM link.usage_batches',
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].id).toBe('cnv_unsent');
    const event = JSON.parse(rows[0].event) as UsageAdmittedBatch;
    expect(event.batchId).toBe('cnv_unsent');
    const [conversation] = admittedConversations(event) as UsageAdmittedBatch['conversations'];
    expect({ ...conversation, startedAt: new Date(conversation.startedAt).toISOString() }).toEqual({
      conversationId: 'cnv_unsent',
      recipientId: 'rcp_1',
      campaignId: 'cmp_1',
      projectId: 'prj_1',
      startedAt: '2026-05-01T10:00:02.456Z',
    });
    expect(rows[0].created_at.toISOString()).toBe('2026-05-01T10:00:02.456Z');
    // Both conversations stay in the record; the per-row mark is gone.
    const columns = await pool.query(
      `SELECT column_name FROM information_schema.columns WHERE table_schema = 'link' AND table_name = 'conversations'`,
    );
    expect(columns.rows.map((r) => r.column_name)).not.toContain('published_at');
    expect((await pool.query('SELECT count(*)::int AS n FROM link.conversations')).rows[0].n).toBe(2);
  });
});
