import { AppError, newId } from '@outreach/platform';
import type { Pool } from 'pg';
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

/** What a project's writes need: a pool, or a client inside a transaction, and the clock. */
type ProjectWriteDeps = { pool: Pick<Pool, 'query'> } & Pick<CampaignDeps, 'clock'>;

/** Creates a project (`deps.pool` may be a transaction's client). */
export async function createProject(deps: ProjectWriteDeps, input: { name: string }): Promise<Project> {
  const { rows } = await deps.pool.query<ProjectRow>(
    'INSERT INTO projects (id, name, created_at) VALUES ($1, $2, $3) RETURNING *',
    [newId('prj'), input.name, deps.clock()],
  );
  return toProject(rows[0]);
}

/** Renames the project; 404 `not_found` when it does not exist. */
export async function renameProject(
  deps: Pick<CampaignDeps, 'pool'>,
  projectId: string,
  input: { name: string },
): Promise<Project> {
  const { rows } = await deps.pool.query<ProjectRow>(
    'UPDATE projects SET name = $2 WHERE id = $1 RETURNING *',
    [projectId, input.name],
  );
  if (rows.length === 0) throw new AppError('not_found', 'Project not found.', { details: { projectId } });
  return toProject(rows[0]);
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
