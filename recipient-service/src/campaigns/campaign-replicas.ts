import { status as GrpcStatus } from '@grpc/grpc-js';
import type { CampaignFacts, CampaignMessage, CampaignSnapshot } from '@outreach/contracts';
import { callUnary, campaignNotFound, fromServiceError, type Logger } from '@outreach/platform';
import type { Pool, PoolClient } from 'pg';

/** The campaign facts this service keeps, plus the recipient count it maintains. */
export interface CampaignReplica {
  id: string;
  projectId: string;
  deviceId: string;
  startDate: Date;
  endDate: Date;
  launchedAt: Date | null;
  haltedAt: Date | null;
  recipientCap: number | null;
  version: number;
  recipientCount: number;
  /** Set once the campaign was deleted: it then takes no recipients and is not found. */
  deletedAt: Date | null;
}

type Db = Pool | PoolClient;

interface ReplicaRow {
  id: string;
  project_id: string;
  device_id: string;
  start_date: Date;
  end_date: Date;
  launched_at: Date | null;
  halted_at: Date | null;
  recipient_cap: number | null;
  version: string;
  recipient_count: number;
  deleted_at: Date | null;
}

const COLUMNS =
  'id, project_id, device_id, start_date, end_date, launched_at, halted_at, recipient_cap, version, recipient_count, deleted_at';

/** Maps a replica row. */
export function toReplica(r: ReplicaRow): CampaignReplica {
  return {
    id: r.id,
    projectId: r.project_id,
    deviceId: r.device_id,
    startDate: r.start_date,
    endDate: r.end_date,
    launchedAt: r.launched_at,
    haltedAt: r.halted_at,
    recipientCap: r.recipient_cap,
    version: Number(r.version),
    recipientCount: r.recipient_count,
    deletedAt: r.deleted_at,
  };
}

/** Reads one replica; `lock` takes the row lock that serialises writes to the campaign. */
export async function findReplica(db: Db, id: string, lock = false): Promise<CampaignReplica | null> {
  const { rows } = await db.query<ReplicaRow>(
    `SELECT ${COLUMNS} FROM recipients.campaign_replicas WHERE id = $1${lock ? ' FOR UPDATE' : ''}`,
    [id],
  );
  return rows[0] ? toReplica(rows[0]) : null;
}

/**
 * Adds `delta` to a campaign's recipient count and returns the replica as it now is. The
 * update takes the row lock that serialises writes to the campaign, held to the end of
 * the caller's transaction; null when the campaign is not replicated.
 */
export async function addToRecipientCount(
  db: PoolClient,
  id: string,
  delta: number,
): Promise<CampaignReplica | null> {
  const { rows } = await db.query<ReplicaRow>(
    `UPDATE recipients.campaign_replicas SET recipient_count = recipient_count + $2
      WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, delta],
  );
  return rows[0] ? toReplica(rows[0]) : null;
}

/** Every replica of a project, locked, in id order (a stable lock order avoids deadlocks). */
export async function lockProjectReplicas(db: PoolClient, projectId: string): Promise<CampaignReplica[]> {
  const { rows } = await db.query<ReplicaRow>(
    `SELECT ${COLUMNS} FROM recipients.campaign_replicas WHERE project_id = $1 ORDER BY id FOR UPDATE`,
    [projectId],
  );
  return rows.map(toReplica);
}

/**
 * Applies a campaign snapshot when its version is newer than the one held.
 * A tombstone stays: a later snapshot without `deletedAt` (written by a campaign service of the
 * release before deletion, mid-rollout) never brings a deleted campaign back.
 */
export async function applyCampaignSnapshot(db: Db, s: CampaignSnapshot): Promise<void> {
  await db.query(
    `INSERT INTO recipients.campaign_replicas
       (id, project_id, device_id, start_date, end_date, launched_at, halted_at, recipient_cap, version, deleted_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (id) DO UPDATE SET
       project_id = EXCLUDED.project_id, device_id = EXCLUDED.device_id,
       start_date = EXCLUDED.start_date, end_date = EXCLUDED.end_date,
       launched_at = EXCLUDED.launched_at, halted_at = EXCLUDED.halted_at,
       recipient_cap = EXCLUDED.recipient_cap, version = EXCLUDED.version,
       deleted_at = COALESCE(campaign_replicas.deleted_at, EXCLUDED.deleted_at), updated_at = now()
     WHERE campaign_replicas.version < EXCLUDED.version`,
    [
      s.id,
      s.projectId,
      s.deviceId,
      s.startDate,
      s.endDate,
      s.launchedAt,
      s.haltedAt,
      s.recipientCap,
      s.version,
      s.deletedAt ?? null,
    ],
  );
}

/** The deleted campaigns that still have recipients (migration 010 indexes the deleted ones). */
export async function deletedCampaignsWithRecipients(db: Db): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT c.id FROM recipients.campaign_replicas c
      WHERE c.deleted_at IS NOT NULL
        AND EXISTS (SELECT 1 FROM recipients.recipients r WHERE r.campaign_id = c.id)`,
  );
  return rows.map((r) => r.id);
}

/**
 * Stores a campaign fetched over gRPC (it has no version): it fills a gap only, and any
 * snapshot that arrives later replaces it.
 */
export async function insertFetchedCampaign(db: Db, c: CampaignMessage): Promise<void> {
  await db.query(
    `INSERT INTO recipients.campaign_replicas
       (id, project_id, device_id, start_date, end_date, launched_at, halted_at, recipient_cap, version)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, -1)
     ON CONFLICT (id) DO NOTHING`,
    [
      c.id,
      c.projectId,
      c.deviceId,
      c.startDate,
      c.endDate,
      c.launchedAt ?? null,
      c.haltedAt ?? null,
      c.recipientCap ?? null,
    ],
  );
}

/**
 * One campaign of the project from the campaign service (GetCampaign), or null when it knows no
 * such campaign there (a NOT_FOUND status, whether or not it carries our error code); any other
 * failure is thrown as gRPC reported it.
 */
async function fetchCampaign(
  campaignClient: object,
  projectId: string,
  campaignId: string,
  deadlineMs: number,
): Promise<CampaignMessage | null> {
  try {
    const c = await callUnary<object, CampaignMessage>(
      campaignClient,
      'GetCampaign',
      { projectId, campaignId },
      { deadlineMs },
    );
    return c.id === campaignId && c.projectId === projectId ? c : null;
  } catch (err) {
    if ((err as { code?: number }).code === GrpcStatus.NOT_FOUND) return null;
    throw err;
  }
}

/** Looks a campaign up for a project, fetching it from the campaign service on a miss. */
export type CampaignLookup = (projectId: string, campaignId: string) => Promise<CampaignReplica>;

/**
 * The lookup used by every RPC that names a campaign. A campaign created a moment ago
 * may not be replicated yet: it is then fetched with CampaignService.GetCampaign and
 * stored. Unknown campaigns and those of another project are `not_found`.
 */
export function campaignLookup(pool: Pool, campaignClient: object | null): CampaignLookup {
  return async (projectId, campaignId) => {
    let replica = await findReplica(pool, campaignId);
    if (!replica && campaignClient) {
      let campaign: CampaignMessage | null;
      try {
        campaign = await fetchCampaign(campaignClient, projectId, campaignId, 3000);
      } catch (err) {
        throw fromServiceError(err);
      }
      if (campaign) {
        await insertFetchedCampaign(pool, campaign);
        replica = await findReplica(pool, campaignId);
      }
    }
    if (!replica || replica.projectId !== projectId || replica.deletedAt) throw campaignNotFound(campaignId);
    return replica;
  };
}

/** What the campaign service says of a campaign: its state's facts and its recipient cap. */
export interface AuthorityFacts extends CampaignFacts {
  recipientCap: number | null;
}

/**
 * The campaign service's own facts of a project's campaigns (the authority), by id: one campaign
 * when `campaignId` is given, else all of them; a campaign it does not know is left out. Undefined
 * when it could not be asked: the replicas alone judge then.
 */
export type CampaignAuthority = (
  projectId: string,
  campaignId?: string,
) => Promise<Map<string, AuthorityFacts> | undefined>;

// A write waits at most this long for the campaign service before it goes by its replica.
const AUTHORITY_DEADLINE_MS = 1000;
// How long one campaign's answer serves the writes after it: a bulk import sends a batch every
// few milliseconds, and one call each cost more than the rest of the write (a third of bulk
// create's throughput). A launch or a halt is therefore seen within a second at most.
const AUTHORITY_MAX_AGE_MS = 1000;
// Answers kept before the expired ones are swept out.
const AUTHORITY_KEPT = 10_000;
// The failures after which writes go by the replicas alone: the campaign service is out of reach,
// or (an older version, mid-rollout) does not offer the method.
const FALL_BACK_ON: readonly number[] = [
  GrpcStatus.UNAVAILABLE,
  GrpcStatus.DEADLINE_EXCEEDED,
  GrpcStatus.UNIMPLEMENTED,
];
// While the campaign service is out of reach every write says so; one line per this many ms.
const AUTHORITY_WARN_EVERY_MS = 10_000;

/**
 * Asks the campaign service (GetCampaign, or ListCampaigns for a whole project). The replicas
 * follow a launch or a halt through the event stream, a moment later or, while NATS or the
 * outbox is down, much later; every write asks this as well, so that none is accepted on a
 * campaign launched or halted more than `maxAgeMs` before. One campaign's answer serves the
 * writes of the next `maxAgeMs` (and those arriving while it is asked). With the campaign
 * service out of reach, writes go on by the replicas (which is what they are kept for), a
 * warning says so, and `judgedByReplicas` counts each; any other failure of the call refuses the write.
 */
export function campaignAuthority(
  campaignClient: object,
  logger: Logger,
  judgedByReplicas: { inc(): void },
  maxAgeMs = AUTHORITY_MAX_AGE_MS,
): CampaignAuthority {
  const facts = (c: CampaignMessage): AuthorityFacts => ({
    startDate: c.startDate,
    endDate: c.endDate,
    launchedAt: c.launchedAt ?? null,
    haltedAt: c.haltedAt ?? null,
    recipientCap: c.recipientCap ?? null,
  });
  let warnedAt = 0;
  const ask = async (projectId: string, campaignId?: string) => {
    if (campaignId === undefined) {
      const { campaigns } = await callUnary<object, { campaigns: CampaignMessage[] }>(
        campaignClient,
        'ListCampaigns',
        { projectId },
        { deadlineMs: AUTHORITY_DEADLINE_MS },
      );
      return new Map(campaigns.map((c) => [c.id, facts(c)]));
    }
    const c = await fetchCampaign(campaignClient, projectId, campaignId, AUTHORITY_DEADLINE_MS);
    return new Map(c ? [[c.id, facts(c)]] : []);
  };
  const answer = async (projectId: string, campaignId?: string) => {
    try {
      return await ask(projectId, campaignId);
    } catch (err) {
      const code = (err as { code?: number }).code;
      if (code === GrpcStatus.NOT_FOUND) return new Map<string, AuthorityFacts>();
      // (A project the campaign service does not know.) Anything but being out of reach (or, mid-rollout, not offering the method) refuses the write.
      if (code === undefined || !FALL_BACK_ON.includes(code)) throw fromServiceError(err);
      if (Date.now() - warnedAt >= AUTHORITY_WARN_EVERY_MS) {
        warnedAt = Date.now();
        logger.warn(
          { err, campaignId },
          'campaign service not answering; writes judged by the replicas alone',
        );
      }
      return undefined;
    }
  };
  const recent = new Map<string, { askedAt: number; answer: ReturnType<typeof answer> }>();
  const shared = (projectId: string, campaignId?: string) => {
    if (campaignId === undefined) return answer(projectId);
    const key = `${projectId}/${campaignId}`;
    const now = Date.now();
    const hit = recent.get(key);
    if (hit && now - hit.askedAt < maxAgeMs) return hit.answer;
    if (recent.size >= AUTHORITY_KEPT) {
      for (const [k, v] of recent) if (now - v.askedAt >= maxAgeMs) recent.delete(k);
    }
    const entry = { askedAt: now, answer: answer(projectId, campaignId) };
    recent.set(key, entry);
    // No answer and no failure is kept: the next write asks again.
    const forget = () => {
      if (recent.get(key) === entry) recent.delete(key);
    };
    entry.answer.then((a) => a === undefined && forget(), forget);
    return entry.answer;
  };
  return async (projectId, campaignId) => {
    const answered = await shared(projectId, campaignId);
    // Counted per write, not per call: writes sharing an unanswered call were each judged so.
    if (answered === undefined) judgedByReplicas.inc();
    return answered;
  };
}
