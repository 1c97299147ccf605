import { ensureStreams } from '@outreach/platform';
import Redis from 'ioredis';
import { connect, type NatsConnection } from 'nats';
import { Pool, type QueryConfig } from 'pg';
import pino from 'pino';
import { clearRedisPrefix, createTestNamespace, type TestNamespace } from '../../test/support/isolation';
import { Admission } from '../src/admission/admission.service';
import { rollUpConversations } from '../src/admission/conversations.repository';
import type { OpenLink } from '../src/admission/link-checks';
import { runMigrations } from '../src/server';
import { activeCampaign, device, recipient } from './support/fixtures';

let ns: TestNamespace;
let pool: Pool;
let redis: Redis;
let nc: NatsConnection;
let admission: Admission;
/** Every statement the admission sent to PostgreSQL, in order. */
const statements: string[] = [];

beforeAll(async () => {
  ns = await createTestNamespace();
  await runMigrations(ns.env);
  pool = new Pool({ connectionString: ns.databaseUrl, max: 5 });
  redis = new Redis(ns.env.REDIS_URL);
  nc = await connect({ servers: ns.env.NATS_URL });
  await ensureStreams(await nc.jetstreamManager(), ns.natsPrefix);
  // The real pool; the wrapper only notes what it is asked before passing it on.
  const noting = {
    query: (config: string | QueryConfig, values?: unknown[]) => {
      statements.push(typeof config === 'string' ? config : config.text);
      return pool.query(config, values);
    },
  } as unknown as Pool;
  admission = new Admission({
    redis,
    pool: noting,
    js: nc.jetstream(),
    redisPrefix: ns.redisPrefix,
    natsPrefix: ns.natsPrefix,
    clock: () => new Date(),
    logger: pino({ level: 'silent' }),
    groupCommitMs: 0,
    rebuildGraceMs: 20,
    conversationTtlSeconds: 60,
    usagePublishMs: 0,
  });
});

afterAll(async () => {
  await admission?.close();
  await nc?.close();
  await redis?.quit();
  await pool?.end();
  await ns?.cleanup();
});

const campaignCounts = () => statements.filter((s) => /WHERE campaign_id = \$1/.test(s)).length;
const recipientCounts = () => statements.filter((s) => /link\.recipient_rollups/.test(s)).length;

describe('rebuilding counters after Redis lost its data', () => {
  it("counts the campaign's record once for all its recipients, each recipient's own, and refunds nothing", async () => {
    const dev = device();
    const campaign = activeCampaign({ deviceId: dev.id, includedConversations: 1000 });
    const linkOf = (r: ReturnType<typeof recipient>): OpenLink => ({ ...r, campaign, device: dev });
    const links = Array.from({ length: 30 }, () => linkOf(recipient(campaign)));
    await Promise.all(links.map((l) => admission.admit(l)));
    const used = () => redis.hget(`${ns.redisPrefix}link:cmp:${campaign.id}:usage`, 'used');
    expect(await used()).toBe('30');

    await clearRedisPrefix(ns.redisPrefix);
    statements.length = 0;
    await Promise.all(links.map((l) => admission.admit(l)));
    expect(campaignCounts()).toBe(1);
    expect(recipientCounts()).toBe(30);
    expect(await used()).toBe('60');
    expect(await redis.hget(`${ns.redisPrefix}link:rcp:${links[7].recipient.id}`, 'count')).toBe('2');

    // A recipient whose counters alone are missing: its record is counted, the campaign's is not.
    statements.length = 0;
    await admission.admit(linkOf(recipient(campaign)));
    expect(campaignCounts()).toBe(0);
    expect(recipientCounts()).toBe(1);
    expect(await used()).toBe('61');
  });

  it('rebuilds from the rolled-up counts too: folding old conversations refunds no cap and no budget', async () => {
    const dev = device();
    const campaign = activeCampaign({ deviceId: dev.id, includedConversations: 8 });
    const linkOf = (r: ReturnType<typeof recipient>): OpenLink => ({ ...r, campaign, device: dev });
    const capped = linkOf(recipient(campaign, { maxTotalInteractions: 5 }));
    const other = linkOf(recipient(campaign));
    for (let i = 0; i < 4; i++) await admission.admit(capped);
    for (let i = 0; i < 3; i++) await admission.admit(other);

    // Two years on, the conversations are older than any window and are folded into counts.
    await pool.query(
      "UPDATE link.conversations SET started_at = started_at - interval '730 days' WHERE campaign_id = $1",
      [campaign.id],
    );
    expect(await rollUpConversations(pool, new Date(Date.now() - 400 * 86_400_000), 100)).toBe(7);
    const rows = await pool.query('SELECT 1 FROM link.conversations WHERE campaign_id = $1', [campaign.id]);
    expect(rows.rowCount).toBe(0);

    await clearRedisPrefix(ns.redisPrefix);
    await admission.admit(capped); // its 5th: the cap still counts the four folded ones
    await expect(admission.admit(capped)).rejects.toMatchObject({ code: 'link_disabled' });
    // The campaign's 8th was that one: its budget still counts the seven folded ones.
    await expect(admission.admit(other)).rejects.toMatchObject({ code: 'budget_exhausted' });
  });
});
