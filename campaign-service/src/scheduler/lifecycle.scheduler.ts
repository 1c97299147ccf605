import { type CampaignLifecycleEvent, subjects } from '@outreach/contracts';
import {
  type Clock,
  type JetStreamClient,
  type Logger,
  publishJson,
  withTransaction,
} from '@outreach/platform';
import type { Pool } from 'pg';

interface NoticeRow {
  campaign_id: string;
  project_id: string;
  transition: 'started' | 'ended';
  at: Date;
}

// A campaign is active from the later of its start and its launch, until the earlier of
// its end and its halt; it started only if that window is not empty.
const CLAIM_SQL = `
  WITH due AS (
    SELECT id, project_id,
           GREATEST(start_date, launched_at) AS active_from,
           LEAST(end_date, COALESCE(halted_at, end_date)) AS ended_at
      FROM campaigns WHERE launched_at IS NOT NULL
  ), candidates AS (
    SELECT id, project_id, 'started' AS transition, active_from AS at FROM due
     WHERE active_from <= $1 AND active_from < ended_at
    UNION ALL
    SELECT id, project_id, 'ended', ended_at FROM due WHERE ended_at <= $1
  )
  INSERT INTO lifecycle_notices (campaign_id, project_id, transition, at, claimed_at)
  SELECT id, project_id, transition, at, $1 FROM candidates
  ON CONFLICT (campaign_id, transition) DO NOTHING
  RETURNING campaign_id, project_id, transition, at`;

/**
 * Publishes `started`/`ended` once per campaign and transition. The notice row, claimed
 * by a unique key before publishing, decides which instance publishes; the msgID
 * `<campaignId>:<transition>` lets JetStream drop a repeat after a crash, and a sweep
 * republishes rows claimed but never marked sent. State itself is never changed here.
 */
export class LifecycleScheduler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly pool: Pool,
    private readonly js: JetStreamClient,
    private readonly prefix: string,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly intervalMs: number,
    /** How long a claim may stay unsent before the sweep assumes its publisher died. */
    private readonly staleAfterMs = 5000,
  ) {}

  /** Starts ticking every interval. */
  start(): void {
    const loop = () => {
      if (this.stopped) return;
      this.running = this.tick()
        .catch((err) => this.logger.warn({ err }, 'scheduler tick failed; retrying next tick'))
        .finally(() => {
          this.running = undefined;
          if (!this.stopped) {
            this.timer = setTimeout(loop, this.intervalMs);
            this.timer.unref();
          }
        });
    };
    loop();
  }

  /** Stops ticking and waits for the tick in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** One pass: claim what is due now, publish it, then republish stale claims. */
  async tick(): Promise<void> {
    const now = this.clock();
    const claimed = await this.pool.query<NoticeRow>(CLAIM_SQL, [now]);
    const order = (a: NoticeRow, b: NoticeRow) =>
      a.at.getTime() - b.at.getTime() ||
      (a.transition === 'started' ? -1 : 1) - (b.transition === 'started' ? -1 : 1);
    for (const row of claimed.rows.sort(order)) await this.publish(row);
    await this.sweep(now);
  }

  private async sweep(now: Date): Promise<void> {
    await withTransaction(this.pool, async (client) => {
      const stale = await client.query<NoticeRow>(
        `SELECT campaign_id, project_id, transition, at FROM lifecycle_notices
          WHERE sent_at IS NULL AND claimed_at <= $1
          ORDER BY at, transition DESC FOR UPDATE SKIP LOCKED LIMIT 100`,
        [new Date(now.getTime() - this.staleAfterMs)],
      );
      for (const row of stale.rows) await this.publish(row, client);
    });
  }

  private async publish(row: NoticeRow, client: { query: Pool['query'] } = this.pool): Promise<void> {
    const event: CampaignLifecycleEvent = {
      campaignId: row.campaign_id,
      projectId: row.project_id,
      transition: row.transition,
      at: row.at.toISOString(),
    };
    await publishJson(
      this.js,
      subjects(this.prefix).campaignLifecycle,
      event,
      `${row.campaign_id}:${row.transition}`,
    );
    await client.query(
      'UPDATE lifecycle_notices SET sent_at = now() WHERE campaign_id = $1 AND transition = $2',
      [row.campaign_id, row.transition],
    );
    this.logger.info(
      { campaignId: row.campaign_id, transition: row.transition },
      'lifecycle event published',
    );
  }
}
