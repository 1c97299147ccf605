import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Pool, type PoolClient } from 'pg';
import type { Logger } from 'pino';
import { errorCodes, untilReachable } from './first-connect';

/** Options of `createPool`. */
export interface PoolOptions {
  /**
   * Longest a statement may run: PostgreSQL cancels it (so it never commits after the caller
   * gave up), and the client gives up one second later in case the server cannot answer.
   */
  statementTimeoutMs?: number;
}

/**
 * A PostgreSQL pool whose connections name `service` (pg_stat_activity's application_name,
 * unless the URL or PGAPPNAME names another); errors on idle clients are logged instead of
 * crashing the process.
 */
export function createPool(
  service: string,
  url: string,
  max: number,
  logger: Logger,
  options: PoolOptions = {},
): Pool {
  const timeouts = options.statementTimeoutMs
    ? { statement_timeout: options.statementTimeoutMs, query_timeout: options.statementTimeoutMs + 1000 }
    : {};
  const pool = new Pool({
    connectionString: url,
    max,
    connectionTimeoutMillis: 5000,
    // So that an operator (and the bench) can tell which service a backend works for.
    fallback_application_name: service,
    ...timeouts,
  });
  pool.on('error', (err) => logger.warn({ err }, 'idle PostgreSQL client failed'));
  return pool;
}

/** What a client checked out of the pool does with an error event: nothing (see `withClient`). */
const ignoreError = () => undefined;

/**
 * Runs `fn` with a client of `pool` and releases it after. The pool listens for errors only on
 * idle clients: one whose connection drops while checked out but between queries (during a NATS
 * publish, say) would emit `error` to no one and crash the process. Here the drop surfaces as the
 * rejection of the client's next query instead, and the pool discards the client on release.
 */
export async function withClient<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  client.on('error', ignoreError);
  try {
    return await fn(client);
  } finally {
    client.off('error', ignoreError);
    client.release();
  }
}

/** Runs `fn` in a transaction, committing on success and rolling back on any error. */
export function withTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  return withClient(pool, async (client) => {
    await client.query('BEGIN');
    try {
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  });
}

// What a PostgreSQL not (yet) there fails with: worth trying again. The socket's own errors
// (refused, reset, unreachable, a name that does not resolve yet: a StatefulSet pod's DNS record
// is gone while the pod is), and the server's SQLSTATEs for a start it cannot take now: 57P03
// cannot_connect_now (starting up, shutting down, in recovery), 57P01 admin_shutdown, 57P02
// crash_shutdown, 53300 too_many_connections (other pods' connections free up; rolling updates),
// and class 08 connection exceptions. A refused login (28P01, 28000), a missing database (3D000)
// or a certificate that does not verify will not heal by waiting and fail the start at once.
const POSTGRES_NOT_THERE_YET = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '08000',
  '08001',
  '08003',
  '08006',
]);
// node-postgres' own errors for a connection that timed out or was closed under it (no code).
const POSTGRES_GONE_MESSAGE = /timeout exceeded when trying to connect|Connection terminated/i;

/** Whether connecting to PostgreSQL failed in a way that waiting may heal (see POSTGRES_NOT_THERE_YET). */
export function isPostgresNotThereYet(err: unknown): boolean {
  if (errorCodes(err).some((code) => POSTGRES_NOT_THERE_YET.has(code))) return true;
  return err instanceof Error && POSTGRES_GONE_MESSAGE.test(err.message);
}

/** The server a pool connects to as host:port, without credentials, to name in a log line. */
function serverOf(pool: Pool): string | undefined {
  const url = (pool.options as { connectionString?: string }).connectionString;
  if (!url) return undefined;
  try {
    const parsed = new URL(url);
    return parsed.host || parsed.searchParams.get('host') || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Waits until `pool` can open a connection: a pod started while PostgreSQL is down, starting up
 * or its name not resolving yet tries again (a warning `PostgreSQL not reachable yet` at each
 * attempt, at most 2 s apart), the way `connectNats` waits for NATS (both use `untilReachable`),
 * rather than exiting into a crash loop; a refused login or a missing database rejects at once.
 * `signal` ends the waiting.
 */
export async function waitForPostgres(pool: Pool, logger?: Logger, signal?: AbortSignal): Promise<void> {
  await untilReachable(
    async () => {
      const client = await pool.connect();
      client.release();
    },
    isPostgresNotThereYet,
    logger,
    { message: 'PostgreSQL not reachable yet; trying again', fields: { server: serverOf(pool) }, signal },
  );
}

/** How `migrate` waits for the locks a migration needs. */
export interface MigrateOptions {
  /**
   * How long one statement of a migration may wait for a lock before the migration is rolled
   * back and tried again: while an `ALTER TABLE` waits behind a long reader, every query on its
   * table waits behind it, so the wait must stay short.
   */
  lockTimeoutMs?: number;
  /** Tries of one migration before `migrate` gives up, the wait between them doubling to 5 s. */
  attempts?: number;
  /** Ends the wait for a PostgreSQL not reachable yet (see `waitForPostgres`). */
  signal?: AbortSignal;
}

const LOCK_NOT_AVAILABLE = '55P03';
const UNDEFINED_TABLE = '42P01';

/** The migrations `schema` records as applied; none when it has no record yet. */
async function appliedMigrations(client: PoolClient, schema: string): Promise<Set<string>> {
  try {
    const { rows } = await client.query<{ name: string }>(
      `SELECT name FROM ${quoteIdent(schema)}.schema_migrations`,
    );
    return new Set(rows.map((r) => r.name));
  } catch (err) {
    if ((err as { code?: string }).code === UNDEFINED_TABLE) return new Set();
    throw err;
  }
}

/**
 * Applies the numbered `.sql` files of `dir` (e.g. `001_init.sql`) that `schema` has not
 * seen, each in its own transaction, under an advisory lock so that replicas starting
 * together migrate once. A schema already up to date takes no lock, so a pod starting while
 * another version's migration runs does not wait for it. A migration that cannot get a table's
 * lock within `lockTimeoutMs` (a long reader holds it) is rolled back and tried again later,
 * rather than holding every query of that table in the queue behind it. It first waits for a
 * PostgreSQL that is not reachable yet (`waitForPostgres`): every service migrates at start, so
 * this is how a service started while PostgreSQL is down waits for it. Returns the names applied.
 */
export async function migrate(
  pool: Pool,
  schema: string,
  dir: string,
  logger?: Logger,
  options: MigrateOptions = {},
): Promise<string[]> {
  // Ten tries take about 50 s: four runs of the chart's Job (backoffLimit 3) stay within Helm's
  // 5 min hook timeout, and a service's own start within its 2 min startup probe.
  const { lockTimeoutMs = 2000, attempts = 10, signal } = options;
  await waitForPostgres(pool, logger, signal);
  const files = readdirSync(dir)
    .filter((f) => /^\d+_.+\.sql$/.test(f))
    .sort();
  return withClient(pool, async (client) => {
    const seen = await appliedMigrations(client, schema);
    if (files.every((f) => seen.has(f))) return [];
    const applied: string[] = [];
    try {
      await client.query('SELECT pg_advisory_lock(hashtext($1))', [`migrate:${schema}`]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${quoteIdent(schema)}.schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      const done = await appliedMigrations(client, schema);
      for (const file of files) {
        if (done.has(file)) continue;
        const sql = readFileSync(path.join(dir, file), 'utf8');
        for (let attempt = 1; ; attempt++) {
          await client.query('BEGIN');
          try {
            await client.query(`SET LOCAL search_path TO ${quoteIdent(schema)}, public`);
            await client.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.round(lockTimeoutMs))}`);
            await client.query(sql);
            await client.query(`INSERT INTO ${quoteIdent(schema)}.schema_migrations (name) VALUES ($1)`, [
              file,
            ]);
            await client.query('COMMIT');
            break;
          } catch (err) {
            await client.query('ROLLBACK').catch(() => undefined);
            const code = (err as { code?: string }).code;
            if (code === LOCK_NOT_AVAILABLE && attempt < attempts) {
              const retryInMs = Math.min(250 * 2 ** (attempt - 1), 5000);
              logger?.warn(
                { schema, migration: file, attempt, retryInMs },
                'migration waits for a lock another session holds; trying again',
              );
              await new Promise((r) => setTimeout(r, retryInMs));
              continue;
            }
            throw new Error(`migration ${schema}/${file} failed: ${(err as Error).message}`, { cause: err });
          }
        }
        applied.push(file);
        logger?.info({ schema, migration: file }, 'migration applied');
      }
    } finally {
      await client
        .query('SELECT pg_advisory_unlock(hashtext($1))', [`migrate:${schema}`])
        .catch(() => undefined);
    }
    return applied;
  });
}

/**
 * Runs `page(pageSize)`, a statement handling at most that many rows and returning how many it
 * handled, until one handles fewer; returns the total. Keeps each statement (and its locks) short.
 */
export async function inPages(page: (limit: number) => Promise<number>, pageSize: number): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await page(pageSize);
    total += n;
    if (n < pageSize) return total;
  }
}

/** Quotes a PostgreSQL identifier. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
