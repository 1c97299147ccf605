import pino from 'pino';
import { createPool } from './db';

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
