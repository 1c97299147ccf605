import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, type Pool } from 'pg';
import pino from 'pino';
import { createPool, migrate, withTransaction } from './db';

const PG = process.env.TEST_POSTGRES_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const logger = pino({ level: 'silent' });

/** The application_name a pool's connection reports to PostgreSQL. */
async function applicationName(url: string): Promise<string> {
  const pool = createPool('link-runtime', url, 1, logger);
  try {
    const { rows } = await pool.query<{ name: string }>(
      'SELECT application_name AS name FROM pg_stat_activity WHERE pid = pg_backend_pid()',
    );
    return rows[0].name;
  } finally {
    await pool.end();
  }
}

describe('createPool', () => {
  it('names its connections after the service', async () => {
    expect(await applicationName(PG)).toBe('link-runtime');
  });

  it('leaves the name to the URL when the URL gives one', async () => {
    const url = new URL(PG);
    url.searchParams.set('application_name', 'ops-chosen');
    expect(await applicationName(url.toString())).toBe('ops-chosen');
  });
});

describe('withClient and withTransaction', () => {
  /** Ends the backend of `pid` from another connection, as a failover or a restart would. */
  async function terminate(pid: number): Promise<void> {
    const admin = createPool('test-admin', PG, 1, logger);
    try {
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    } finally {
      await admin.end();
    }
  }

  it('survive a connection dropped between queries: the next query fails, the pool goes on', async () => {
    const pool = createPool('test', PG, 1, logger);
    try {
      const failure = withTransaction(pool, async (client) => {
        const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        await terminate(rows[0].pid);
        // Between queries, as while a transaction waits for a NATS publish: the client's error
        // event has no pool listener now, and without one it would crash the process.
        await new Promise((resolve) => setTimeout(resolve, 200));
        await client.query('SELECT 1');
      });
      await expect(failure).rejects.toThrow();
      // The dead client was discarded: the pool's one connection is a fresh one.
      expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows[0].one).toBe(1);
    } finally {
      await pool.end();
    }
  });
});

describe('migrate', () => {
  let pool: Pool;
  let dir: string;
  let schema: string;
  beforeEach(() => {
    pool = createPool('test-migrate', PG, 2, logger);
    dir = mkdtempSync(path.join(tmpdir(), 'migrations-'));
    schema = `migrate_test_${process.pid}_${Math.floor(Math.random() * 1e9)}`;
    writeFileSync(path.join(dir, '001_init.sql'), 'CREATE TABLE items (id int PRIMARY KEY);');
  });
  afterEach(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pool.end();
    rmSync(dir, { recursive: true, force: true });
  });

  it("gives way to a long reader instead of holding the table's queries behind its ALTER, then applies", async () => {
    expect(await migrate(pool, schema, dir, logger)).toEqual(['001_init.sql']);
    writeFileSync(path.join(dir, '002_column.sql'), 'ALTER TABLE items ADD COLUMN note text;');
    const reader = new Client({ connectionString: PG });
    const writer = new Client({ connectionString: PG });
    await reader.connect();
    await writer.connect();
    try {
      // A long read (a report, a dump) holds the table's weakest lock; the ALTER needs the strongest.
      await reader.query('BEGIN');
      await reader.query(`SELECT count(*) FROM ${schema}.items`);
      const migrating = migrate(pool, schema, dir, logger, { lockTimeoutMs: 100 });
      await new Promise((r) => setTimeout(r, 50));
      const began = Date.now();
      const inserted = writer
        .query(`INSERT INTO ${schema}.items (id) VALUES (1)`)
        .then(() => Date.now() - began);
      // Behind an ALTER that waited for the reader, the insert would wait as long as the reader.
      const waited = await Promise.race([
        inserted,
        new Promise<number>((r) => setTimeout(() => r(Infinity), 1000)),
      ]);
      await reader.query('COMMIT');
      await inserted;
      expect(waited).toBeLessThan(1000);
      expect(await migrating).toEqual(['002_column.sql']);
      const { rows } = await writer.query(
        `SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'items' AND column_name = 'note'`,
        [schema],
      );
      expect(rows).toHaveLength(1);
    } finally {
      await reader.end();
      await writer.end();
    }
  });

  it('fails with the lock wait named once its tries are spent', async () => {
    await migrate(pool, schema, dir, logger);
    writeFileSync(path.join(dir, '002_column.sql'), 'ALTER TABLE items ADD COLUMN note text;');
    const reader = new Client({ connectionString: PG });
    await reader.connect();
    try {
      await reader.query('BEGIN');
      await reader.query(`SELECT count(*) FROM ${schema}.items`);
      await expect(migrate(pool, schema, dir, logger, { lockTimeoutMs: 50, attempts: 2 })).rejects.toThrow(
        /migration .*002_column\.sql failed: canceling statement due to lock timeout/,
      );
    } finally {
      await reader.end();
    }
  });

  it('takes no lock on a schema already up to date, so it does not wait for a migration in progress', async () => {
    await migrate(pool, schema, dir, logger);
    const other = new Client({ connectionString: PG });
    await other.connect();
    try {
      await other.query('SELECT pg_advisory_lock(hashtext($1))', [`migrate:${schema}`]);
      const began = Date.now();
      expect(await migrate(pool, schema, dir, logger)).toEqual([]);
      expect(Date.now() - began).toBeLessThan(1000);
    } finally {
      await other.end();
    }
  });
});
