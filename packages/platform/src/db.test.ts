import pino from 'pino';
import { createPool, withTransaction } from './db';

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
