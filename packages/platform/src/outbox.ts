import { ErrorCode } from 'nats';
import type { Pool, PoolClient } from 'pg';
import type { Logger } from 'pino';
import { withTransaction } from './db';
import { type JetStreamClient, publishJson } from './nats';
import { captureTraceContext, runInTraceContext } from './trace-context';

/**
 * A service's outbox: messages written in the transaction of the change they announce, published
 * to NATS afterwards by an OutboxRelay, so that a change is announced once it is committed, even
 * when NATS is down at the time.
 */
export interface Outbox {
  /** Its table: id bigserial, subject, payload jsonb, trace_context jsonb, created_at, sent_at, refused. */
  table: string;
  /** Starts its JetStream message ids, apart from other outboxes publishing to the same stream. */
  msgIdPrefix: string;
  /** The advisory lock (by its text) that lets one relay of the service publish at a time. */
  relayLock: string;
  /**
   * What must reach NATS in the order written: rows of one key are published one after another,
   * rows of different keys side by side. Without it, all rows go one after another.
   */
  orderKey?: (message: { subject: string; payload: unknown }) => string;
}

/** An outbox row as the relay reads it. */
interface OutboxRow {
  id: string;
  subject: string;
  payload: unknown;
  trace_context: Record<string, string> | null;
  created_at: Date;
}

/** The rows of a batch by `orderKey`, each key's in the order written (one chain without a key). */
function chainsOf(outbox: Outbox, rows: readonly OutboxRow[]): OutboxRow[][] {
  const { orderKey } = outbox;
  if (!orderKey) return [[...rows]];
  const chains = new Map<string, OutboxRow[]>();
  for (const row of rows) {
    const key = orderKey(row);
    const chain = chains.get(key);
    if (chain) chain.push(row);
    else chains.set(key, [row]);
  }
  return [...chains.values()];
}

/** Adds a message to the outbox inside the caller's transaction. */
export async function enqueue(
  outbox: Outbox,
  client: PoolClient,
  subject: string,
  payload: unknown,
): Promise<void> {
  await client.query(`INSERT INTO ${outbox.table} (subject, payload, trace_context) VALUES ($1, $2, $3)`, [
    subject,
    JSON.stringify(payload),
    JSON.stringify(captureTraceContext()),
  ]);
}

/** A message for the outbox. */
export interface OutboxMessage {
  subject: string;
  payload: unknown;
}

/** Adds messages to the outbox in one statement inside the caller's transaction, in their order. */
export async function enqueueAll(
  outbox: Outbox,
  client: PoolClient,
  messages: readonly OutboxMessage[],
): Promise<void> {
  if (messages.length === 0) return;
  await client.query(
    `INSERT INTO ${outbox.table} (subject, payload, trace_context)
     SELECT subject, payload::jsonb, $3 FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS m (subject, payload, n)
     ORDER BY n`,
    [
      messages.map((m) => m.subject),
      messages.map((m) => JSON.stringify(m.payload)),
      JSON.stringify(captureTraceContext()),
    ],
  );
}

/**
 * Publishes outbox rows in id order, then marks them sent. One relay at a time holds an
 * advisory lock so instances do not interleave; the row's id and creation instant are the
 * JetStream msgID, so a crash between publishing and marking repeats nothing a consumer can
 * see, while a database reset or restore, which hands out the same ids again, is not taken
 * for a repeat.
 */
export class OutboxRelay {
  private running: Promise<void> | undefined;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly outbox: Outbox,
    private readonly pool: Pool,
    private readonly js: JetStreamClient,
    private readonly logger: Logger,
    private readonly intervalMs: number,
  ) {}

  /** Starts the periodic sweep that catches rows a kick missed (crash, NATS down). */
  start(): void {
    let sweeps = 0;
    const loop = () => {
      if (this.stopped) return;
      this.kick();
      // Sent rows are only needed while JetStream could still dedupe a repeat of them.
      if (sweeps++ % 600 === 0) this.prune().catch((err) => this.logger.warn({ err }, 'outbox prune failed'));
      this.timer = setTimeout(loop, this.intervalMs);
      this.timer.unref();
    };
    loop();
  }

  /** Requests a publish pass now; passes never overlap, one more runs if asked meanwhile. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          while ((await this.publishBatch()) > 0) {
            // keep draining
          }
        } catch (err) {
          this.logger.warn({ err }, 'outbox relay pass failed; the sweep retries');
        }
      } while (this.again && !this.stopped);
    })().finally(() => {
      this.running = undefined;
    });
  }

  /** Deletes rows sent more than a day ago. */
  async prune(): Promise<number> {
    const { rowCount } = await this.pool.query(
      `DELETE FROM ${this.outbox.table} WHERE sent_at IS NOT NULL AND sent_at < now() - interval '1 day'`,
    );
    return rowCount ?? 0;
  }

  /** Waits for the current pass, for tests and shutdown. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /**
   * Stops sweeping, waits for the pass in flight, then publishes one last batch: what the last
   * requests committed while that pass ran (their kicks come after `stop`), which would otherwise
   * wait for another replica's sweep. One batch, so a NATS that is down cannot hold the shutdown.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.idle();
    await this.publishBatch().catch((err) =>
      this.logger.warn({ err }, 'outbox relay could not publish its last batch; another sweep will'),
    );
  }

  private async publishBatch(): Promise<number> {
    return withTransaction(this.pool, async (client) => {
      const lock = await client.query<{ ok: boolean }>(
        'SELECT pg_try_advisory_xact_lock(hashtext($1)) AS ok',
        [this.outbox.relayLock],
      );
      // Another replica is relaying: nothing to do in this (empty) transaction.
      if (!lock.rows[0].ok) return 0;
      const { rows } = await client.query<OutboxRow>(
        `SELECT id, subject, payload, trace_context, created_at FROM ${this.outbox.table} WHERE sent_at IS NULL ORDER BY id LIMIT 200`,
      );
      const sent: string[] = [];
      const refused: string[] = [];
      let failure: unknown;
      // Each chain in its order, the chains side by side; a chain stops at its first failure, so
      // nothing of its key is published after a row that was not (the next pass starts there).
      await Promise.all(
        chainsOf(this.outbox, rows).map(async (chain) => {
          for (const row of chain) {
            try {
              await this.publish(row);
            } catch (err) {
              if ((err as { code?: string }).code !== ErrorCode.MaxPayloadExceeded) {
                failure ??= err;
                return;
              }
              // NATS will never take it, and retrying it would hold back every change behind it for good.
              refused.push(row.id);
              this.logger.error(
                {
                  outboxId: row.id,
                  subject: row.subject,
                  bytes: Buffer.byteLength(JSON.stringify(row.payload)),
                },
                'outbox message is over the NATS max_payload: set aside, never published',
              );
            }
            sent.push(row.id);
          }
        }),
      );
      if (sent.length > 0) {
        await client.query(
          `UPDATE ${this.outbox.table} SET sent_at = now(), refused = CASE WHEN id = ANY($2::bigint[]) THEN 'max_payload' END
           WHERE id = ANY($1::bigint[])`,
          [sent, refused],
        );
      }
      // What was published is marked (this transaction commits); the rest waits for the next pass.
      if (failure !== undefined) {
        this.logger.warn(
          { err: failure, published: sent.length, of: rows.length },
          'outbox relay pass stopped; the sweep retries',
        );
        return 0;
      }
      return rows.length;
    });
  }

  /** Publishes one row in the trace of the change that wrote it, under its message id. */
  private publish(row: OutboxRow): Promise<unknown> {
    return runInTraceContext(row.trace_context, () =>
      publishJson(
        this.js,
        row.subject,
        row.payload,
        `${this.outbox.msgIdPrefix}:${row.id}:${row.created_at.getTime()}`,
      ),
    );
  }
}
