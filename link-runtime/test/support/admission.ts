import { ensureStreams } from '@outreach/platform';
import Redis from 'ioredis';
import { connect, type NatsConnection } from 'nats';
import { Pool } from 'pg';
import pino from 'pino';
import { createTestNamespace, type TestNamespace } from '../../../test/support/isolation';
import { Admission, type AdmissionDeps } from '../../src/admission/admission.service';
import { runMigrations } from '../../src/server';

/** An Admission on a fresh namespace of the real stores, with what a test inspects next to it. */
export interface AdmissionFixture {
  ns: TestNamespace;
  pool: Pool;
  redis: Redis;
  nc: NatsConnection;
  admission: Admission;
  /** Closes the admission, then the stores, then removes the namespace. */
  close: () => Promise<void>;
}

/**
 * Migrates a fresh namespace and builds an Admission on it. `wrapPool` lets a test watch what the
 * admission asks of PostgreSQL while the queries still go to the real pool.
 */
export async function startAdmission(
  overrides: Partial<Pick<AdmissionDeps, 'usagePublishMs' | 'rebuildGraceMs' | 'logger' | 'onSeeded'>> = {},
  wrapPool: (pool: Pool) => Pool = (pool) => pool,
): Promise<AdmissionFixture> {
  const ns = await createTestNamespace();
  await runMigrations(ns.env);
  const pool = new Pool({ connectionString: ns.databaseUrl, max: 5 });
  const redis = new Redis(ns.env.REDIS_URL);
  const nc = await connect({ servers: ns.env.NATS_URL });
  const jsm = await nc.jetstreamManager();
  await ensureStreams(jsm, ns.natsPrefix);
  const admission = new Admission({
    redis,
    pool: wrapPool(pool),
    js: nc.jetstream(),
    jsm,
    redisPrefix: ns.redisPrefix,
    natsPrefix: ns.natsPrefix,
    clock: () => new Date(),
    logger: pino({ level: 'silent' }),
    groupCommitMs: 0,
    rebuildGraceMs: 20,
    statementTimeoutMs: 5000,
    conversationTtlSeconds: 60,
    recordAtStart: true,
    usagePublishMs: 0,
    replayHours: 24,
    ...overrides,
  });
  const close = async () => {
    await admission.close();
    await nc.close();
    await redis.quit();
    await pool.end();
    await ns.cleanup();
  };
  return { ns, pool, redis, nc, admission, close };
}
