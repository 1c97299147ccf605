import type { Pool, QueryConfig } from 'pg';
import pino from 'pino';
import { clearRedisPrefix } from '../../test/support/isolation';
import { rollUpConversations } from '../src/admission/conversations.repository';
import type { OpenLink } from '../src/admission/link-checks';
import { type AdmissionFixture, startAdmission } from './support/admission';
import { activeCampaign, device, recipient } from './support/fixtures';

let f: AdmissionFixture;
/** What the admission logged, as parsed JSON lines. */
const logged: { level: number; msg: string; recipientId?: string }[] = [];
/** The outcome of every seeding, in order (what link_counter_seeds_total counts). */
const seeds: string[] = [];
/** Every statement the admission sent to PostgreSQL, in order, with its parameters. */
const statements: { text: string; values: unknown[] }[] = [];

beforeAll(async () => {
  // The real pool; the wrapper only notes what it is asked before passing it on.
  f = await startAdmission(
    {
      logger: pino({ level: 'debug' }, { write: (line: string) => logged.push(JSON.parse(line)) }),
      onSeeded: (outcome) => seeds.push(outcome),
    },
    (pool) =>
      ({
        query: (config: string | QueryConfig, values?: unknown[]) => {
          if (typeof config === 'string') statements.push({ text: config, values: values ?? [] });
          else statements.push({ text: config.text, values: config.values ?? values ?? [] });
          return pool.query(config, values);
        },
      }) as unknown as Pool,
  );
});

afterAll(() => f?.close());

const campaignCounts = () => statements.filter((s) => /WHERE campaign_id = \$1/.test(s.text)).length;
/** The statements that read recipients' facts: each asks for a list of recipients and their window starts. */
const factsReads = () =>
  statements
    .filter((s) => /link\.recipient_rollups/.test(s.text))
    .map((s) => ({ recipients: s.values[0] as string[], since: s.values[1] as (Date | null)[] }));
/** How many recipients' records were counted, over all statements. */
const recipientCounts = () => factsReads().reduce((n, r) => n + r.recipients.length, 0);
/** How many recipients' window starts were read (those asked with a window). */
const windowReads = () => factsReads().reduce((n, r) => n + r.since.filter((d) => d !== null).length, 0);

describe('rebuilding counters after Redis lost its data', () => {
  it("counts the campaign's record once for all its recipients, each recipient's own, and refunds nothing", async () => {
    const dev = device();
    const campaign = activeCampaign({ deviceId: dev.id, includedConversations: 1000 });
    const linkOf = (r: ReturnType<typeof recipient>): OpenLink => ({ ...r, campaign, device: dev });
    const links = Array.from({ length: 30 }, () => linkOf(recipient(campaign)));
    await Promise.all(links.map((l) => f.admission.admit(l)));
    const used = () => f.redis.hget(`${f.ns.redisPrefix}link:cmp:${campaign.id}:usage`, 'used');
    expect(await used()).toBe('30');

    await clearRedisPrefix(f.ns.redisPrefix);
    statements.length = 0;
    await Promise.all(links.map((l) => f.admission.admit(l)));
    expect(campaignCounts()).toBe(1);
    expect(recipientCounts()).toBe(30);
    // Their reads arrived together, so they shared statements: one, unless the rebuilds' waits
    // ended in different turns.
    expect(factsReads().length).toBeLessThanOrEqual(3);
    expect(new Set(factsReads().flatMap((r) => r.recipients)).size).toBe(30);
    expect(await used()).toBe('60');
    expect(await f.redis.hget(`${f.ns.redisPrefix}link:rcp:${links[7].recipient.id}`, 'count')).toBe('2');

    // A recipient whose counters alone are missing: its record is counted, the campaign's is not.
    statements.length = 0;
    await f.admission.admit(linkOf(recipient(campaign)));
    expect(campaignCounts()).toBe(0);
    expect(recipientCounts()).toBe(1);
    expect(await used()).toBe('61');
  });

  it("reads a recipient's record once for a burst of starts at its link, its window included", async () => {
    const dev = device();
    const campaign = activeCampaign({ deviceId: dev.id, includedConversations: 1000 });
    const limits = { maxInteractionsPerWindow: 5, windowSeconds: 3600 };
    const link: OpenLink = { ...recipient(campaign, limits), campaign, device: dev };
    for (let i = 0; i < 3; i++) await f.admission.admit(link);

    await clearRedisPrefix(f.ns.redisPrefix);
    statements.length = 0;
    const burst = await Promise.allSettled(Array.from({ length: 12 }, () => f.admission.admit(link)));
    // The three starts from before the loss still fill the window: two of the burst fit in it.
    expect(burst.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    expect(
      burst.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.code),
    ).toEqual(Array(10).fill('cooldown'));
    expect(recipientCounts()).toBe(1);
    expect(windowReads()).toBe(1);
  });

  it('logs and counts a rebuild that restored counts at info, and a new recipient finding no counters at debug', async () => {
    const dev = device();
    const campaign = activeCampaign({ deviceId: dev.id, includedConversations: 1000 });
    const link: OpenLink = { ...recipient(campaign), campaign, device: dev };
    const linesOf = () => logged.filter((l) => l.recipientId === link.recipient.id);
    seeds.length = 0;
    await f.admission.admit(link);
    expect(seeds).toEqual(['empty']);
    // pino levels: 20 debug, 30 info.
    expect(linesOf().map((l) => [l.level, l.msg])).toEqual([[20, 'usage counters started empty']]);

    await clearRedisPrefix(f.ns.redisPrefix);
    await f.admission.admit(link);
    expect(linesOf().map((l) => [l.level, l.msg])).toEqual([
      [20, 'usage counters started empty'],
      [30, 'usage counters rebuilt'],
    ]);
    expect(linesOf()[1]).toMatchObject({ recipientCount: 1, campaignCount: 1 });
    expect(seeds).toEqual(['empty', 'restored']);
  });

  it('rebuilds from the rolled-up counts too: folding old conversations refunds no cap and no budget', async () => {
    const dev = device();
    const campaign = activeCampaign({ deviceId: dev.id, includedConversations: 8 });
    const linkOf = (r: ReturnType<typeof recipient>): OpenLink => ({ ...r, campaign, device: dev });
    const capped = linkOf(recipient(campaign, { maxTotalInteractions: 5 }));
    const other = linkOf(recipient(campaign));
    for (let i = 0; i < 4; i++) await f.admission.admit(capped);
    for (let i = 0; i < 3; i++) await f.admission.admit(other);

    // Two years on, the conversations are older than any window and are folded into counts.
    await f.pool.query(
      "UPDATE link.conversations SET started_at = started_at - interval '730 days' WHERE campaign_id = $1",
      [campaign.id],
    );
    expect(await rollUpConversations(f.pool, new Date(Date.now() - 400 * 86_400_000), 100)).toBe(7);
    const rows = await f.pool.query('SELECT 1 FROM link.conversations WHERE campaign_id = $1', [campaign.id]);
    expect(rows.rowCount).toBe(0);

    await clearRedisPrefix(f.ns.redisPrefix);
    await f.admission.admit(capped); // its 5th: the cap still counts the four folded ones
    await expect(f.admission.admit(capped)).rejects.toMatchObject({ code: 'link_disabled' });
    // The campaign's 8th was that one: its budget still counts the seven folded ones.
    await expect(f.admission.admit(other)).rejects.toMatchObject({ code: 'budget_exhausted' });
  });
});
