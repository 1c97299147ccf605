import { AppError, newId, withTransaction } from '@outreach/platform';
import type { Pool, PoolClient } from 'pg';
import { recordActivity } from '../activity/activity.service';
import type { CampaignDeps } from '../deps';

/** A project: the owner of keys, devices and campaigns. */
export interface Project {
  id: string;
  name: string;
  createdAt: string;
}

interface ProjectRow {
  id: string;
  name: string;
  created_at: Date;
}

const toProject = (r: ProjectRow): Project => ({
  id: r.id,
  name: r.name,
  createdAt: r.created_at.toISOString(),
});

/** What a project's writes need: the pool, the clock, and who acts (the project's activity). */
type ProjectWriteDeps = Pick<CampaignDeps, 'pool' | 'clock' | 'actor'>;

/** Creates a project, recorded in its activity. */
export async function createProject(deps: ProjectWriteDeps, input: { name: string }): Promise<Project> {
  return withTransaction(deps.pool, (client) => insertProject(client, deps, input));
}

/** Inserts a project and records it, in the caller's transaction (`client`). */
export async function insertProject(
  client: PoolClient,
  deps: Pick<CampaignDeps, 'clock' | 'actor'>,
  input: { name: string },
): Promise<Project> {
  const { rows } = await client.query<ProjectRow>(
    'INSERT INTO projects (id, name, created_at) VALUES ($1, $2, $3) RETURNING *',
    [newId('prj'), input.name, deps.clock()],
  );
  const project = toProject(rows[0]);
  await recordActivity(client, deps, {
    projectId: project.id,
    action: 'project.created',
    targetId: project.id,
    targetName: project.name,
  });
  return project;
}

/** Renames the project, recorded in its activity with the name it had; 404 `not_found` when it does not exist. */
export async function renameProject(
  deps: ProjectWriteDeps,
  projectId: string,
  input: { name: string },
): Promise<Project> {
  return withTransaction(deps.pool, async (client) => {
    // NO KEY: the rename must not hold up the writes of the project's rows that refer to it.
    const before = await client.query<ProjectRow>('SELECT * FROM projects WHERE id = $1 FOR NO KEY UPDATE', [
      projectId,
    ]);
    if (before.rows.length === 0)
      throw new AppError('not_found', 'Project not found.', { details: { projectId } });
    // The same name again changes nothing, and nothing is recorded.
    if (before.rows[0].name === input.name) return toProject(before.rows[0]);
    const { rows } = await client.query<ProjectRow>(
      'UPDATE projects SET name = $2 WHERE id = $1 RETURNING *',
      [projectId, input.name],
    );
    await recordActivity(client, deps, {
      projectId,
      action: 'project.renamed',
      targetId: projectId,
      targetName: input.name,
      detail: `was “${before.rows[0].name}”`,
    });
    return toProject(rows[0]);
  });
}

/** Every project, oldest first. */
export async function listProjects(deps: CampaignDeps): Promise<Project[]> {
  const { rows } = await deps.pool.query<ProjectRow>(
    'SELECT * FROM projects ORDER BY created_at, id COLLATE "C"',
  );
  return rows.map(toProject);
}

/** The project, or 404 `not_found`. */
export async function getProject(deps: Pick<CampaignDeps, 'pool'>, projectId: string): Promise<Project> {
  const { rows } = await deps.pool.query<ProjectRow>('SELECT * FROM projects WHERE id = $1', [projectId]);
  if (rows.length === 0) throw new AppError('not_found', 'Project not found.', { details: { projectId } });
  return toProject(rows[0]);
}

/** Throws 404 unless the project exists. */
export async function assertProject(pool: Pool, projectId: string): Promise<void> {
  await getProject({ pool }, projectId);
}
