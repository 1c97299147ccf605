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
  | 'operator.added'
  | 'operator.removed';

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

/** A page of the project's activity, newest first, and whether an older page follows. */
export async function listActivity(
  pool: Pool,
  projectId: string,
  page: { limit: number; offset: number },
): Promise<{ entries: ActivityEntry[]; more: boolean }> {
  const { rows } = await pool.query<{
    seq: string;
    at: Date;
    actor: string;
    action: ActivityAction;
    target_id: string;
    target_name: string;
    detail: string;
  }>('SELECT * FROM project_activity WHERE project_id = $1 ORDER BY seq DESC LIMIT $2 OFFSET $3', [
    projectId,
    page.limit + 1,
    page.offset,
  ]);
  return {
    entries: rows.slice(0, page.limit).map((r) => ({
      seq: Number(r.seq),
      at: r.at.toISOString(),
      actor: r.actor,
      action: r.action,
      targetId: r.target_id,
      targetName: r.target_name,
      detail: r.detail,
    })),
    more: rows.length > page.limit,
  };
}
