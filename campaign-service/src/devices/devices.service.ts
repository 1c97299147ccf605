import {
  type DeviceSnapshot,
  type KnowledgeEntry,
  subjects,
  type ValidationProblem,
} from '@outreach/contracts';
import {
  AppError,
  newId,
  type OutboxMessage,
  parseCidr,
  randomBase62,
  withTransaction,
} from '@outreach/platform';
import type { PoolClient } from 'pg';
import { type ActivityAction, recordActivity } from '../activity/activity.service';
import { editDetail } from '../activity/edit-detail';
import type { CampaignDeps } from '../deps';
import { enqueue } from '../events/outbox';
import { invalid } from '../problems';
import { assertProject } from '../projects/projects.service';

/** A device (the channel a campaign renders through) as the admin API shows it. */
export interface Device extends Omit<DeviceSnapshot, 'version'> {
  version: number;
  createdAt: string;
  updatedAt: string;
}

/** Fields a device is created or patched with. */
export interface DeviceInput {
  name?: string;
  isActive?: boolean;
  ipAllowList?: string[];
  languages?: string[];
  defaultLanguage?: string;
  styling?: DeviceSnapshot['styling'];
  voice?: DeviceSnapshot['voice'];
  persona?: string;
  customInstructions?: string;
  knowledge?: { title: string; content: string }[];
}

interface DeviceRow {
  id: string;
  project_id: string;
  name: string;
  is_active: boolean;
  ip_allow_list: string[];
  languages: string[];
  default_language: string;
  styling: DeviceSnapshot['styling'];
  voice: DeviceSnapshot['voice'];
  persona: string;
  custom_instructions: string;
  knowledge: KnowledgeEntry[];
  created_at: Date;
  updated_at: Date;
  version: number;
}

const toDevice = (r: DeviceRow): Device => ({
  id: r.id,
  projectId: r.project_id,
  name: r.name,
  isActive: r.is_active,
  ipAllowList: r.ip_allow_list,
  languages: r.languages,
  defaultLanguage: r.default_language,
  styling: r.styling,
  voice: r.voice,
  persona: r.persona,
  customInstructions: r.custom_instructions,
  knowledge: r.knowledge,
  version: r.version,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

/** The snapshot other services rebuild device state from. */
export function deviceSnapshot(d: Device): DeviceSnapshot {
  const { createdAt: _c, updatedAt: _u, ...rest } = d;
  return rest;
}

/** Every device's snapshot as the outbox would carry it, under the lock `lockedCampaignSnapshots` takes. */
export async function lockedDeviceSnapshots(
  client: PoolClient,
  natsPrefix: string,
): Promise<OutboxMessage[]> {
  await client.query('LOCK TABLE devices IN SHARE MODE');
  // A deleted device serves no campaign a link runtime could open, so it needs no snapshot.
  const { rows } = await client.query<DeviceRow>(
    'SELECT * FROM devices WHERE deleted_at IS NULL ORDER BY id',
  );
  const subject = subjects(natsPrefix).deviceState;
  return rows.map((r) => ({ subject: subject(r.id), payload: deviceSnapshot(toDevice(r)) }));
}

/** What JSON Schema cannot check: CIDR blocks and the default language being offered. */
export function deviceRuleProblems(
  d: Pick<Device, 'ipAllowList' | 'languages' | 'defaultLanguage'>,
): ValidationProblem[] {
  const problems: ValidationProblem[] = d.ipAllowList.flatMap((block, i) =>
    parseCidr(block)
      ? []
      : [{ pointer: `/ipAllowList/${i}`, rule: 'cidr', message: 'is not an IPv4 or IPv6 CIDR block' }],
  );
  if (d.languages.length > 0 && !d.languages.includes(d.defaultLanguage)) {
    problems.push({
      pointer: '/defaultLanguage',
      rule: 'oneOfLanguages',
      message: 'must be one of languages',
    });
  }
  return problems;
}

function checkDevice(d: Pick<Device, 'ipAllowList' | 'languages' | 'defaultLanguage'>): void {
  const problems = deviceRuleProblems(d);
  if (problems.length > 0) throw invalid(problems);
}

const withIds = (k: { title: string; content: string }[]): KnowledgeEntry[] =>
  k.map((e) => ({ id: `kn_${randomBase62(16)}`, title: e.title, content: e.content }));

/**
 * The most a device's snapshot may take, in bytes of JSON. It travels as one NATS message, whose
 * default maximum is 1 MiB: one too large would stop the outbox, and every change behind it, for
 * good. Every link runtime also keeps it in memory.
 */
export const DEVICE_MAX_BYTES = 512 * 1024;

/** Refuses a device whose snapshot would be over DEVICE_MAX_BYTES (its knowledge takes most). */
export function deviceSizeProblems(snapshot: DeviceSnapshot): ValidationProblem[] {
  const bytes = Buffer.byteLength(JSON.stringify(snapshot), 'utf8');
  if (bytes <= DEVICE_MAX_BYTES) return [];
  const kib = (n: number) => `${Math.ceil(n / 1024).toLocaleString('en-US')} KiB`;
  return [
    {
      pointer: '/knowledge',
      rule: 'maxBytes',
      message: `makes the device ${kib(bytes)}, over its limit of ${kib(DEVICE_MAX_BYTES)} for knowledge, persona and instructions together`,
    },
  ];
}

async function write(
  client: PoolClient,
  deps: CampaignDeps,
  row: DeviceRow,
  action: ActivityAction,
  detail?: string,
): Promise<Device> {
  const device = toDevice(row);
  const snapshot = deviceSnapshot(device);
  // Checked on the snapshot as it will be sent; the transaction is rolled back when it is too large.
  const tooLarge = deviceSizeProblems(snapshot);
  if (tooLarge.length > 0) throw invalid(tooLarge);
  await enqueue(client, subjects(deps.natsPrefix).deviceState(device.id), snapshot);
  await recordActivity(client, deps, {
    projectId: device.projectId,
    action,
    targetId: device.id,
    targetName: device.name,
    detail,
  });
  return device;
}

/**
 * Language tags lower-case, the first of each kept: tags are case-insensitive, and the link runtime
 * compares them as stored, lower-case (`EN` and `en` are one language).
 */
function lowerTags(tags: string[] | undefined): string[] | undefined {
  return tags && [...new Set(tags.map((t) => t.toLowerCase()))];
}

/** Creates a device with defaults for every omitted field. */
export async function createDevice(
  deps: CampaignDeps,
  projectId: string,
  input: DeviceInput & { name: string },
): Promise<Device> {
  await assertProject(deps.pool, projectId);
  const languages = lowerTags(input.languages) ?? ['en'];
  const d = {
    ipAllowList: input.ipAllowList ?? [],
    languages,
    defaultLanguage: input.defaultLanguage?.toLowerCase() ?? languages[0] ?? 'en',
  };
  checkDevice(d);
  const now = deps.clock();
  const device = await withTransaction(deps.pool, async (client) => {
    const { rows } = await client.query<DeviceRow>(
      `INSERT INTO devices (id, project_id, name, is_active, ip_allow_list, languages, default_language,
         styling, voice, persona, custom_instructions, knowledge, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13) RETURNING *`,
      [
        newId('dev'),
        projectId,
        input.name,
        input.isActive ?? true,
        d.ipAllowList,
        d.languages,
        d.defaultLanguage,
        JSON.stringify(input.styling ?? {}),
        JSON.stringify(input.voice ?? { enabled: false }),
        input.persona ?? '',
        input.customInstructions ?? '',
        JSON.stringify(withIds(input.knowledge ?? [])),
        now,
      ],
    );
    return write(client, deps, rows[0], 'device.created');
  });
  deps.afterCommit();
  return device;
}

/**
 * Applies a partial update; knowledge, when given, replaces the whole list. With
 * `expectedVersion`, only while the device is still at that version; otherwise 409
 * `version_changed` (the dashboard's form, which compared its input with that version).
 */
export async function updateDevice(
  deps: CampaignDeps,
  projectId: string,
  deviceId: string,
  patch: DeviceInput,
  opts: { expectedVersion?: number } = {},
): Promise<Device> {
  const device = await withTransaction(deps.pool, async (client) => {
    const { rows } = await client.query<DeviceRow>(
      'SELECT * FROM devices WHERE id = $1 AND project_id = $2 AND deleted_at IS NULL FOR UPDATE',
      [deviceId, projectId],
    );
    if (rows.length === 0) throw notFound(deviceId);
    if (opts.expectedVersion !== undefined && rows[0].version !== opts.expectedVersion)
      throw new AppError('conflict', 'The device was changed meanwhile.', {
        details: { reason: 'version_changed', deviceId },
      });
    const cur = toDevice(rows[0]);
    const next = {
      name: patch.name ?? cur.name,
      isActive: patch.isActive ?? cur.isActive,
      ipAllowList: patch.ipAllowList ?? cur.ipAllowList,
      languages: lowerTags(patch.languages) ?? cur.languages,
      defaultLanguage: patch.defaultLanguage?.toLowerCase() ?? cur.defaultLanguage,
      styling: patch.styling ?? cur.styling,
      voice: patch.voice ?? cur.voice,
      persona: patch.persona ?? cur.persona,
      customInstructions: patch.customInstructions ?? cur.customInstructions,
      knowledge: patch.knowledge ? withIds(patch.knowledge) : cur.knowledge,
    };
    checkDevice(next);
    // Knowledge entries get new ids whenever the list is sent: compared by what they say.
    const said = (k: KnowledgeEntry[]) => k.map((e) => [e.title, e.content]);
    const detail = editDetail([
      { words: 'name', before: cur.name, after: next.name, showBefore: true },
      { words: cur.isActive ? 'turned off' : 'turned on', before: cur.isActive, after: next.isActive },
      { words: 'IP allow-list', before: cur.ipAllowList, after: next.ipAllowList },
      { words: 'languages', before: cur.languages, after: next.languages },
      { words: 'default language', before: cur.defaultLanguage, after: next.defaultLanguage },
      { words: 'styling', before: cur.styling, after: next.styling },
      { words: 'voice', before: cur.voice, after: next.voice },
      { words: 'persona', before: cur.persona, after: next.persona },
      { words: 'custom instructions', before: cur.customInstructions, after: next.customInstructions },
      { words: 'knowledge', before: said(cur.knowledge), after: said(next.knowledge) },
    ]);
    // Nothing changed: no new version, no snapshot, nothing recorded.
    if (detail === null) return cur;
    const updated = await client.query<DeviceRow>(
      `UPDATE devices SET name = $2, is_active = $3, ip_allow_list = $4, languages = $5, default_language = $6,
         styling = $7, voice = $8, persona = $9, custom_instructions = $10, knowledge = $11, updated_at = $12,
         version = version + 1
       WHERE id = $1 RETURNING *`,
      [
        deviceId,
        next.name,
        next.isActive,
        next.ipAllowList,
        next.languages,
        next.defaultLanguage,
        JSON.stringify(next.styling),
        JSON.stringify(next.voice),
        next.persona,
        next.customInstructions,
        JSON.stringify(next.knowledge),
        deps.clock(),
      ],
    );
    return write(client, deps, updated.rows[0], 'device.edited', detail);
  });
  deps.afterCommit();
  return device;
}

/** The project's devices, oldest first. */
export async function listDevices(deps: CampaignDeps, projectId: string): Promise<Device[]> {
  await assertProject(deps.pool, projectId);
  const { rows } = await deps.pool.query<DeviceRow>(
    'SELECT * FROM devices WHERE project_id = $1 AND deleted_at IS NULL ORDER BY created_at, id COLLATE "C"',
    [projectId],
  );
  return rows.map(toDevice);
}

/** One device of the project, or 404. */
export async function getDevice(deps: CampaignDeps, projectId: string, deviceId: string): Promise<Device> {
  const { rows } = await deps.pool.query<DeviceRow>(
    'SELECT * FROM devices WHERE id = $1 AND project_id = $2 AND deleted_at IS NULL',
    [deviceId, projectId],
  );
  if (rows.length === 0) throw notFound(deviceId);
  return toDevice(rows[0]);
}

/**
 * Deletes a device no campaign uses (deleted drafts aside), its content erased; otherwise 409 `device_in_use` with
 * those campaigns' ids. The row lock here and the share lock a campaign's save takes on its
 * device order the two: a campaign saved first is seen here, a deletion first fails that save.
 */
export async function deleteDevice(deps: CampaignDeps, projectId: string, deviceId: string): Promise<void> {
  await withTransaction(deps.pool, async (client) => {
    const { rowCount } = await client.query(
      'SELECT 1 FROM devices WHERE id = $1 AND project_id = $2 AND deleted_at IS NULL FOR UPDATE',
      [deviceId, projectId],
    );
    if (rowCount === 0) throw notFound(deviceId);
    const users = await campaignsUsing(client, deviceId);
    if (users.length > 0) {
      throw new AppError(
        'conflict',
        `The device is used by ${users.length === 1 ? 'a campaign' : `${users.length} campaigns`}.`,
        { details: { reason: 'device_in_use', deviceId, campaignIds: users.map((c) => c.id) } },
      );
    }
    // The row stays for the deleted drafts that refer to it; what the operator wrote into it goes,
    // here and, through its last snapshot, on the state stream and in every link runtime.
    const { rows } = await client.query<DeviceRow>(
      `UPDATE devices SET deleted_at = $2, updated_at = $2, version = version + 1, is_active = false,
         ip_allow_list = '{}', styling = '{}', voice = '{"enabled": false}', persona = '',
         custom_instructions = '', knowledge = '[]'
       WHERE id = $1 RETURNING *`,
      [deviceId, deps.clock()],
    );
    await write(client, deps, rows[0], 'device.deleted');
  });
  deps.afterCommit();
}

/** The campaigns (deleted drafts aside) that use a device, oldest first. */
export async function campaignsUsing(
  db: Pick<PoolClient, 'query'>,
  deviceId: string,
): Promise<Array<{ id: string; name: string }>> {
  const { rows } = await db.query<{ id: string; name: string }>(
    'SELECT id, name FROM campaigns WHERE device_id = $1 AND deleted_at IS NULL ORDER BY created_at, id COLLATE "C"',
    [deviceId],
  );
  return rows;
}

function notFound(deviceId: string): AppError {
  return new AppError('not_found', 'Device not found.', { details: { deviceId } });
}
