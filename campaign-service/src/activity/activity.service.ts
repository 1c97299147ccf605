import type { Pool, PoolClient } from 'pg';
import type { CampaignDeps } from '../deps';

/** What was done; the dashboard words each (`ACTIVITY_WORDS`). */
export type ActivityAction =
  | 'campaign.created'
  | 'campaign.edited'
  | 'campaign.launched'
  | 'campaign.halted'
  | 'campaign.topped_off'
  | 'campaign.deleted'
  | 'device.created'
  | 'device.edited'
  | 'device.deleted'
  | 'api_key.created'
  | 'api_key.revoked'
  | 'project.created'
  | 'project.renamed'
  | 'operator.invited'
  | 'operator.added'
  | 'operator.removed'
  | 'operator.password_reset_link';

/** One recorded change of a project. */
export interface ActivityEntry {
  seq: number;
  at: string;
  actor: string;
  action: ActivityAction;
  targetId: string;
  targetName: string;
  detail: string;
}

/** Who a change is recorded as made by when its caller said nothing (scheduled work, scripts). */
export const UNNAMED_ACTOR = 'system';

/** The actor of the admin API's changes: one shared token, no person. */
export const ADMIN_API_ACTOR = 'admin API';

/** What the activity says of an address invited once its invitation ended unused. */
export const FORMER_INVITEE = 'an address invited';

/**
 * Forgets the addresses of invitations that ended unused (withdrawn, expired, ended with their
 * inviter) in the activity: it keeps that someone was invited, by whom and when.
 */
export async function forgetInvitees(
  client: Pick<PoolClient, 'query'>,
  invitationIds: string[],
): Promise<void> {
  if (invitationIds.length === 0) return;
  await client.query(
    "UPDATE project_activity SET target_name = $2 WHERE action = 'operator.invited' AND target_id = ANY($1)",
    [invitationIds, FORMER_INVITEE],
  );
}

/** Records a change in the caller's transaction, so that it stands or falls with the change. */
export async function recordActivity(
  client: Pick<PoolClient, 'query'>,
  deps: Pick<CampaignDeps, 'clock' | 'actor'>,
  entry: { projectId: string; action: ActivityAction; targetId: string; targetName: string; detail?: string },
): Promise<void> {
  await client.query(
    `INSERT INTO project_activity (project_id, at, actor, action, target_id, target_name, detail)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [
      entry.projectId,
      deps.clock(),
      deps.actor ?? UNNAMED_ACTOR,
      entry.action,
      entry.targetId,
      entry.targetName,
      entry.detail ?? '',
    ],
  );
}

/**
 * A page of the project's activity, newest first: the `limit` entries before `before` (a `seq`;
 * none: the newest), and the `before` of the next, older page (null when there is none). Paged by
 * position, not by count, so entries arriving meanwhile never shift a page, and a deep page costs
 * what the first does.
 */
export async function listActivity(
  pool: Pool,
  projectId: string,
  page: { limit: number; before?: number },
): Promise<{ entries: ActivityEntry[]; nextBefore: number | null }> {
  const { rows } = await pool.query<{
    seq: string;
    at: Date;
    actor: string;
    action: ActivityAction;
    target_id: string;
    target_name: string;
    detail: string;
  }>(
    `SELECT seq, at, actor, action, target_id, target_name, detail FROM project_activity
      WHERE project_id = $1 AND ($3::bigint IS NULL OR seq < $3) ORDER BY seq DESC LIMIT $2`,
    [projectId, page.limit + 1, page.before ?? null],
  );
  const entries = rows.slice(0, page.limit).map((r) => ({
    seq: Number(r.seq),
    at: r.at.toISOString(),
    actor: r.actor,
    action: r.action,
    targetId: r.target_id,
    targetName: r.target_name,
    detail: r.detail,
  }));
  return { entries, nextBefore: rows.length > page.limit ? entries[entries.length - 1].seq : null };
}
