import { ensureStreams } from '@outreach/platform';
import Redis from 'ioredis';
import { connect, type NatsConnection } from 'nats';
import { Pool, type QueryConfig } from 'pg';
import pino from 'pino';
import { clearRedisPrefix, createTestNamespace, type TestNamespace } from '../../test/support/isolation';
import { Admission } from '../src/admission/admission.service';
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
const recipientCounts = () =>
  statements.filter((s) => /count\(\*\).*WHERE recipient_id = \$1$/.test(s)).length;

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
});
