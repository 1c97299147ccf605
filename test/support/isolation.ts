import { randomBytes } from 'node:crypto';
import { deleteKeysWithPrefix, deleteStreams } from '@outreach/platform';
import Redis from 'ioredis';
import { connect } from 'nats';
import { Client } from 'pg';

/** Where the shared test servers are; every suite gets its own namespace inside them. */
export const TEST_SERVERS = {
  postgresAdmin: process.env.TEST_POSTGRES_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  redis: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
  nats: process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222',
};

/** A random lowercase name part, unique per suite. */
export function uniqueName(prefix = 't'): string {
  return `${prefix}${randomBytes(5).toString('hex')}`;
}

/** A fresh PostgreSQL database for one suite, and a function that drops it. */
export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = uniqueName('outreach_t_');
  const admin = new Client({ connectionString: TEST_SERVERS.postgresAdmin });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(TEST_SERVERS.postgresAdmin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new Client({ connectionString: TEST_SERVERS.postgresAdmin });
      await c.connect();
      // Pools closed just before may still be disconnecting; forcing the drop then kills a
      // connection whose owner has no error listener any more. Give them a moment first.
      for (let i = 0; i < 40; i++) {
        const { rows } = await c.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [
          name,
        ]);
        if (rows[0].n === 0) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** Removes every Redis key under `prefix`. */
export async function clearRedisPrefix(prefix: string): Promise<void> {
  const redis = new Redis(TEST_SERVERS.redis);
  await deleteKeysWithPrefix(redis, prefix);
  await redis.quit();
}

/** Deletes the JetStream streams (and so their consumers) of a NATS prefix. */
export async function deleteNatsStreams(prefix: string): Promise<void> {
  const nc = await connect({ servers: TEST_SERVERS.nats });
  await deleteStreams(await nc.jetstreamManager(), prefix);
  await nc.close();
}

/** A complete isolated namespace: database, Redis prefix and NATS prefix, plus the env a service needs. */
export interface TestNamespace {
  env: Record<string, string>;
  databaseUrl: string;
  redisPrefix: string;
  natsPrefix: string;
  cleanup: () => Promise<void>;
}

/** Creates a namespace; call `cleanup` in afterAll. */
export async function createTestNamespace(): Promise<TestNamespace> {
  const db = await createTestDatabase();
  const id = uniqueName('t');
  const redisPrefix = `test:${id}:`;
  const natsPrefix = id;
  return {
    databaseUrl: db.url,
    redisPrefix,
    natsPrefix,
    env: {
      NODE_ENV: 'test',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      DATABASE_URL: db.url,
      REDIS_URL: TEST_SERVERS.redis,
      REDIS_PREFIX: redisPrefix,
      NATS_URL: TEST_SERVERS.nats,
      NATS_PREFIX: natsPrefix,
    },
    cleanup: async () => {
      await Promise.allSettled([db.drop(), clearRedisPrefix(redisPrefix), deleteNatsStreams(natsPrefix)]);
    },
  };
}
