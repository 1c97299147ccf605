import { loadConfig, newId } from '@outreach/platform';
import { Pool } from 'pg';
import pino from 'pino';
import { createTestNamespace, type TestNamespace } from '../../test/support/isolation';
import {
  type ConversationRecord,
  countCampaignConversations,
  insertConversations,
  loadRecipientsFacts,
  rollUpConversations,
} from '../src/admission/conversations.repository';
import { rollUpPeriodically } from '../src/admission/usage-rollup';
import { CONFIG_SPEC, runMigrations } from '../src/server';

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-25T12:00:00Z');
const CUTOFF = new Date(NOW - 400 * DAY);

let ns: TestNamespace;
let pool: Pool;

beforeAll(async () => {
  ns = await createTestNamespace();
  await runMigrations(ns.env);
  pool = new Pool({ connectionString: ns.databaseUrl, max: 8 });
});

afterAll(async () => {
  await pool?.end();
  await ns?.cleanup();
});

/** Writes conversations as the admission does: one statement with their batch event. */
async function write(rows: ConversationRecord[]): Promise<void> {
  const batch = { id: newId('usb'), event: '{}', createdAt: new Date(NOW) };
  await insertConversations(pool, rows, batch);
}

function conversation(recipientId: string, campaignId: string, startedAtMs: number): ConversationRecord {
  return {
    id: newId('cnv'),
    recipientId,
    campaignId,
    projectId: 'prj_test',
    startedAt: new Date(startedAtMs),
  };
}

/** One recipient's facts, as a rebuild reads them. */
const factsOf = async (recipientId: string, since: Date | null) =>
  (await loadRecipientsFacts(pool, [{ recipientId, since, keysSince: new Date(NOW) }]))[0];

const rowsOf = async (recipientId: string) =>
  Number(
    (await pool.query('SELECT count(*) AS n FROM link.conversations WHERE recipient_id = $1', [recipientId]))
      .rows[0].n,
  );

describe('writing conversations', () => {
  it('fails a whole batch holding an id already written: nothing of it lands, its event neither', async () => {
    const [campaign, recipient] = [newId('cmp'), newId('rcp')];
    const first = conversation(recipient, campaign, NOW);
    await write([first]);
    const batch = { id: newId('usb'), event: '{}', createdAt: new Date(NOW) };
    const again = [conversation(recipient, campaign, NOW), { ...first }];
    await expect(insertConversations(pool, again, batch)).rejects.toMatchObject({ code: '23505' });
    expect(await rowsOf(recipient)).toBe(1);
    const events = await pool.query('SELECT 1 FROM link.usage_batches WHERE id = $1', [batch.id]);
    expect(events.rowCount).toBe(0);
  });
});

describe("reading recipients' facts", () => {
  it('answers several recipients in one statement, in order, each with its own window and keys', async () => {
    const campaign = newId('cmp');
    const [a, b, none] = [newId('rcp'), newId('rcp'), newId('rcp')];
    const rows = [
      conversation(a, campaign, NOW - 10 * DAY),
      { ...conversation(a, campaign, NOW - 2 * DAY), startKey: 'key-of-an-old-start' },
      { ...conversation(a, campaign, NOW - 1000), startKey: 'key-of-a-recent-start' },
      conversation(b, campaign, NOW - 5 * DAY),
    ];
    await write(rows);
    const keysSince = new Date(NOW - DAY);
    const facts = await loadRecipientsFacts(pool, [
      { recipientId: b, since: new Date(NOW - 7 * DAY), keysSince },
      { recipientId: none, since: new Date(NOW - DAY), keysSince },
      { recipientId: a, since: new Date(NOW - 3 * DAY), keysSince },
      { recipientId: a, since: null, keysSince },
    ]);
    const startsOf = (...picked: ConversationRecord[]) =>
      picked.map((r) => ({ id: r.id, startedAtMs: r.startedAt.getTime() }));
    // Only keyed starts after keysSince come back: the recent one, not the one two days old.
    const keyed = [{ key: 'key-of-a-recent-start', id: rows[2].id, startedAtMs: NOW - 1000 }];
    expect(facts).toEqual([
      { count: 1, windowStarts: startsOf(rows[3]), keyedStarts: [] },
      { count: 0, windowStarts: [], keyedStarts: [] },
      { count: 3, windowStarts: expect.arrayContaining(startsOf(rows[1], rows[2])), keyedStarts: keyed },
      { count: 3, windowStarts: [], keyedStarts: keyed },
    ]);
    expect(facts[2].windowStarts).toHaveLength(2);
  });
});

describe('rolling up old conversations', () => {
  it('folds announced rows older than the cutoff into counts that read exactly as the rows did', async () => {
    const campaign = newId('cmp');
    const [a, b] = [newId('rcp'), newId('rcp')];
    const old = NOW - 500 * DAY;
    const recent = NOW - 3 * DAY;
    await write([
      ...Array.from({ length: 7 }, (_, i) => conversation(a, campaign, old + i)),
      ...Array.from({ length: 2 }, (_, i) => conversation(a, campaign, recent + i)),
      ...Array.from({ length: 4 }, (_, i) => conversation(b, campaign, old + i)),
    ]);
    // A conversation the previous version wrote and never announced (published_at unset).
    await pool.query(
      `INSERT INTO link.conversations (id, recipient_id, campaign_id, project_id, started_at)
       VALUES ($1, $2, $3, 'prj_test', $4)`,
      [newId('cnv'), b, campaign, new Date(old)],
    );
    const since = new Date(NOW - 30 * DAY);
    const before = {
      a: await factsOf(a, since),
      b: await factsOf(b, since),
      campaign: await countCampaignConversations(pool, campaign),
    };
    expect([before.a.count, before.b.count, before.campaign]).toEqual([9, 5, 14]);

    // Pages of 3: the last page is short, which ends the roll-up.
    const folded: number[] = [];
    for (let n = 3; n === 3; folded.push(n)) n = await rollUpConversations(pool, CUTOFF, 3);
    expect(folded.reduce((x, y) => x + y, 0)).toBe(11);

    expect(await factsOf(a, since)).toEqual(before.a);
    expect(await factsOf(b, since)).toEqual(before.b);
    expect(await countCampaignConversations(pool, campaign)).toBe(before.campaign);
    // The recent rows and the unannounced one are still rows; the rest went into counts.
    expect(await rowsOf(a)).toBe(2);
    expect(await rowsOf(b)).toBe(1);
    expect(before.a.windowStarts).toHaveLength(2);

    // Nothing is left to fold: a second pass changes nothing.
    expect(await rollUpConversations(pool, CUTOFF, 100)).toBe(0);
    expect(await countCampaignConversations(pool, campaign)).toBe(14);
  });

  it('folds every row exactly once while replicas roll up at the same time', async () => {
    const campaigns = [newId('cmp'), newId('cmp')];
    const recipients = Array.from({ length: 12 }, () => newId('rcp'));
    const rows = Array.from({ length: 3000 }, (_, i) =>
      conversation(recipients[i % recipients.length], campaigns[i % 2], NOW - 450 * DAY + i),
    );
    for (let i = 0; i < rows.length; i += 500) await write(rows.slice(i, i + 500));

    const replica = async () => {
      let total = 0;
      for (let n = 50; n === 50; total += n) n = await rollUpConversations(pool, CUTOFF, 50);
      return total;
    };
    const totals = await Promise.all([replica(), replica(), replica(), replica()]);
    expect(totals.reduce((x, y) => x + y, 0)).toBe(3000);
    expect(await countCampaignConversations(pool, campaigns[0])).toBe(1500);
    expect(await countCampaignConversations(pool, campaigns[1])).toBe(1500);
    for (const r of recipients) {
      expect((await factsOf(r, null)).count).toBe(250);
      expect(await rowsOf(r)).toBe(0);
    }
  });

  it('runs as soon as it is started, logs what it folded, and its stop waits for the run', async () => {
    const campaign = newId('cmp');
    const r = newId('rcp');
    await write([conversation(r, campaign, NOW - 420 * DAY), conversation(r, campaign, NOW - 1 * DAY)]);
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const stop = rollUpPeriodically({ pool, logger, clock: () => new Date(NOW) }, 400, 60_000);
    await stop();
    expect(await rowsOf(r)).toBe(1);
    expect((await factsOf(r, null)).count).toBe(2);
    expect(lines.some((l) => l.msg === 'old conversations rolled up' && Number(l.folded) >= 1)).toBe(true);
  });

  it('refuses a cutoff inside the longest rolling window', () => {
    const env = { ...ns.env, CONVERSATION_ROLLUP_ENABLED: 'true' };
    expect(() => loadConfig(CONFIG_SPEC, { ...env, CONVERSATION_ROLLUP_AFTER_DAYS: '365' })).toThrow(
      /CONVERSATION_ROLLUP_AFTER_DAYS must be an integer >= 366/,
    );
    expect(
      loadConfig(CONFIG_SPEC, { ...env, CONVERSATION_ROLLUP_AFTER_DAYS: '366' })
        .CONVERSATION_ROLLUP_AFTER_DAYS,
    ).toBe(366);
  });
});
