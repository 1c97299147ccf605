import {
  type CampaignSnapshot,
  type CampaignState,
  computeTiming,
  deriveCampaignState,
  isEditable,
  subjects,
  type Timing,
} from '@outreach/contracts';
import { AppError, campaignNotFound, newId, type OutboxMessage, withTransaction } from '@outreach/platform';
import type { PoolClient } from 'pg';
import { type ActivityAction, recordActivity } from '../activity/activity.service';
import { editDetail, sameInstant } from '../activity/edit-detail';
import type { CampaignDeps } from '../deps';
import { enqueue } from '../events/outbox';
import { invalid } from '../problems';
import { assertProject } from '../projects/projects.service';

/** A budget top-off with the price captured when it was made. */
export interface TopOff {
  id: string;
  conversations: number;
  pricePerConversation: number | null;
  createdAt: string;
}

/** The allowance of a campaign; `included`/`remaining` are null when it is uncapped. */
export interface Allowance {
  used: number;
  included: number | null;
  remaining: number | null;
  exhausted: boolean;
}

/** The stored facts of a campaign: what its snapshot carries, but for the top-offs' sum and the tombstone. */
export type CampaignRecord = Omit<CampaignSnapshot, 'includedConversations' | 'deletedAt'>;

/** A campaign as the admin API and the dashboard show it: facts plus what is derived at `now`. */
export interface CampaignView extends CampaignRecord {
  state: CampaignState;
  timing: Timing;
  allowance: Allowance;
  topOffs?: TopOff[];
}

/** Fields a campaign is created with. */
export interface CreateCampaignInput {
  name: string;
  deviceId: string;
  startDate: string;
  endDate: string;
  budgetMode: 'metered' | 'fixed';
  pricePerConversation?: number | null;
  fixedPrice?: number | null;
  recipientCap?: number | null;
}

/** Fields a draft or upcoming campaign may change; null clears an optional one. */
export type UpdateCampaignInput = Partial<CreateCampaignInput>;

interface CampaignRow {
  id: string;
  project_id: string;
  name: string;
  device_id: string;
  budget_mode: 'metered' | 'fixed';
  start_date: Date;
  end_date: Date;
  price_per_conversation: string | null;
  fixed_price: string | null;
  recipient_cap: number | null;
  launched_at: Date | null;
  halted_at: Date | null;
  created_at: Date;
  version: number;
  deleted_at: Date | null;
}

interface UsageRow extends CampaignRow {
  used: string;
  included: string | null;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const num = (v: string | null) => (v === null ? null : Number(v));

function toRecord(r: CampaignRow): CampaignRecord {
  return {
    id: r.id,
    projectId: r.project_id,
    name: r.name,
    deviceId: r.device_id,
    budgetMode: r.budget_mode,
    startDate: r.start_date.toISOString(),
    endDate: r.end_date.toISOString(),
    pricePerConversation: num(r.price_per_conversation),
    fixedPrice: num(r.fixed_price),
    recipientCap: r.recipient_cap,
    launchedAt: iso(r.launched_at),
    haltedAt: iso(r.halted_at),
    createdAt: r.created_at.toISOString(),
    version: r.version,
  };
}

/**
 * The allowance from its facts: `used` counts admitted conversations (never refunded);
 * only a metered campaign with at least one top-off is capped.
 */
export function computeAllowance(
  budgetMode: 'metered' | 'fixed',
  used: number,
  included: number | null,
): Allowance {
  if (budgetMode !== 'metered' || included === null) {
    return { used, included: null, remaining: null, exhausted: false };
  }
  return { used, included, remaining: Math.max(included - used, 0), exhausted: used >= included };
}

function toView(r: UsageRow, now: Date): CampaignView {
  const record = toRecord(r);
  const timing = computeTiming(record, now);
  return {
    ...record,
    state: timing.state,
    timing,
    allowance: computeAllowance(record.budgetMode, Number(r.used), num(r.included)),
  };
}

const SELECT_WITH_USAGE = `
  SELECT c.*,
    COALESCE((SELECT u.used FROM campaign_usage u WHERE u.campaign_id = c.id), 0) AS used,
    (SELECT sum(t.conversations) FROM top_offs t WHERE t.campaign_id = c.id) AS included
  FROM campaigns c`;

// Every read but the republish of snapshots leaves deleted campaigns out.
const LIVE = 'c.deleted_at IS NULL';

/** The snapshot published on every change; `deletedAt` makes it a deleted campaign's tombstone. */
export function campaignSnapshot(
  r: CampaignRecord,
  included: number | null,
  deletedAt: Date | null = null,
): CampaignSnapshot {
  return {
    id: r.id,
    projectId: r.projectId,
    name: r.name,
    deviceId: r.deviceId,
    budgetMode: r.budgetMode,
    startDate: r.startDate,
    endDate: r.endDate,
    launchedAt: r.launchedAt,
    haltedAt: r.haltedAt,
    recipientCap: r.recipientCap,
    pricePerConversation: r.pricePerConversation,
    fixedPrice: r.fixedPrice,
    includedConversations: r.budgetMode === 'metered' ? included : null,
    createdAt: r.createdAt,
    version: r.version,
    // Only a tombstone carries the field: every other snapshot stays as it always was.
    ...(deletedAt ? { deletedAt: deletedAt.toISOString() } : {}),
  };
}

/**
 * Every campaign's snapshot as the outbox would carry it, read under a lock that holds off every
 * write to the table (new campaigns included) until the caller's transaction ends: a change's own
 * snapshot is then queued either before the lock, and read here already, or after these, never
 * between the read and the queueing of an older one (the stream keeps only the last per subject).
 */
export async function lockedCampaignSnapshots(
  client: PoolClient,
  natsPrefix: string,
): Promise<OutboxMessage[]> {
  // Locked first, read after: the read's snapshot then holds every change committed before the
  // lock (a top-off bumps its campaign's version in the same transaction).
  await client.query('LOCK TABLE campaigns IN SHARE MODE');
  const { rows } = await client.query<CampaignRow & { included: string | null }>(
    `SELECT c.*, (SELECT sum(conversations) FROM top_offs t WHERE t.campaign_id = c.id) AS included
       FROM campaigns c ORDER BY c.id`,
  );
  const subject = subjects(natsPrefix).campaignState;
  return rows.map((r) => ({
    subject: subject(r.id),
    payload: campaignSnapshot(toRecord(r), num(r.included), r.deleted_at),
  }));
}

async function publishSnapshot(client: PoolClient, deps: CampaignDeps, row: CampaignRow): Promise<void> {
  const { rows } = await client.query<{ included: string | null }>(
    'SELECT sum(conversations) AS included FROM top_offs WHERE campaign_id = $1',
    [row.id],
  );
  await enqueue(
    client,
    subjects(deps.natsPrefix).campaignState(row.id),
    campaignSnapshot(toRecord(row), num(rows[0].included), row.deleted_at),
  );
}

/** Checks the rules JSON Schema cannot express on the full (merged) campaign. */
async function checkCampaign(
  client: PoolClient,
  projectId: string,
  c: Omit<CreateCampaignInput, 'name'>,
): Promise<void> {
  const problems = [];
  if (Date.parse(c.startDate) >= Date.parse(c.endDate)) {
    problems.push({ pointer: '/endDate', rule: 'afterStartDate', message: 'must be after startDate' });
  }
  if (c.budgetMode === 'fixed') {
    if (c.fixedPrice === null || c.fixedPrice === undefined) {
      problems.push({
        pointer: '/fixedPrice',
        rule: 'required',
        message: 'is required for a fixed campaign',
      });
    }
    if (c.pricePerConversation !== null && c.pricePerConversation !== undefined) {
      problems.push({
        pointer: '/pricePerConversation',
        rule: 'budgetMode',
        message: 'is not used by a fixed campaign (its conversations cost 0)',
      });
    }
  } else if (c.fixedPrice !== null && c.fixedPrice !== undefined) {
    problems.push({
      pointer: '/fixedPrice',
      rule: 'budgetMode',
      message: 'is only used by a fixed campaign',
    });
  }
  // Share-locked to the end of the save, so a device's deletion cannot pass it unseen.
  const device = await client.query(
    'SELECT 1 FROM devices WHERE id = $1 AND project_id = $2 AND deleted_at IS NULL FOR SHARE',
    [c.deviceId, projectId],
  );
  if (device.rowCount === 0) {
    problems.push({ pointer: '/deviceId', rule: 'exists', message: 'is not a device of this project' });
  }
  if (problems.length > 0) throw invalid(problems);
}

/** Creates a draft campaign. */
export async function createCampaign(
  deps: CampaignDeps,
  projectId: string,
  input: CreateCampaignInput,
): Promise<CampaignView> {
  await assertProject(deps.pool, projectId);
  const id = await withTransaction(deps.pool, async (client) => {
    await checkCampaign(client, projectId, input);
    const { rows } = await client.query<CampaignRow>(
      `INSERT INTO campaigns (id, project_id, name, device_id, start_date, end_date, budget_mode,
         price_per_conversation, fixed_price, recipient_cap, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`,
      [
        newId('cmp'),
        projectId,
        input.name,
        input.deviceId,
        new Date(input.startDate),
        new Date(input.endDate),
        input.budgetMode,
        input.pricePerConversation ?? null,
        input.fixedPrice ?? null,
        input.recipientCap ?? null,
        deps.clock(),
      ],
    );
    await publishSnapshot(client, deps, rows[0]);
    await recordActivity(client, deps, {
      projectId,
      action: 'campaign.created',
      targetId: rows[0].id,
      targetName: rows[0].name,
    });
    return rows[0].id;
  });
  deps.afterCommit();
  return getCampaign(deps, projectId, id);
}

/**
 * A change of a campaign, done on its locked row at one instant `now`; a string it returns details
 * it in the activity, and UNCHANGED says it changed nothing (no new version, nothing recorded).
 */
type CampaignChange = (client: PoolClient, row: CampaignRow, now: Date) => Promise<unknown>;

const UNCHANGED = Symbol('unchanged');

/**
 * Runs `change` on the locked campaign row at one instant `now`, bumps the version, queues the
 * snapshot and records `action` in the project's activity, all in the same transaction.
 */
async function changeCampaign(
  deps: CampaignDeps,
  projectId: string,
  campaignId: string,
  action: ActivityAction,
  change: CampaignChange,
): Promise<CampaignView> {
  await changeCampaignRow(deps, projectId, campaignId, action, change);
  return getCampaign(deps, projectId, campaignId);
}

/** `changeCampaign` without reading the campaign back (a deleted one cannot be). */
async function changeCampaignRow(
  deps: CampaignDeps,
  projectId: string,
  campaignId: string,
  action: ActivityAction,
  change: CampaignChange,
): Promise<void> {
  await withTransaction(deps.pool, async (client) => {
    const { rows } = await client.query<CampaignRow>(
      `SELECT * FROM campaigns c WHERE id = $1 AND project_id = $2 AND ${LIVE} FOR UPDATE`,
      [campaignId, projectId],
    );
    if (rows.length === 0) throw campaignNotFound(campaignId);
    const detail = await change(client, rows[0], deps.clock());
    if (detail === UNCHANGED) return;
    const bumped = await client.query<CampaignRow>(
      'UPDATE campaigns SET version = version + 1 WHERE id = $1 RETURNING *',
      [campaignId],
    );
    await publishSnapshot(client, deps, bumped.rows[0]);
    await recordActivity(client, deps, {
      projectId,
      action,
      targetId: campaignId,
      targetName: bumped.rows[0].name,
      detail: typeof detail === 'string' ? detail : undefined,
    });
  });
  deps.afterCommit();
}

const stateOf = (row: CampaignRow, now: Date) =>
  deriveCampaignState(
    {
      startDate: row.start_date,
      endDate: row.end_date,
      launchedAt: row.launched_at,
      haltedAt: row.halted_at,
    },
    now,
  );

function conflict(reason: string, message: string, state: CampaignState): AppError {
  return new AppError('conflict', message, { details: { reason, state } });
}

/**
 * Changes a campaign while it is draft or upcoming; otherwise 409 `not_editable`. With
 * `expectedVersion`, only while the campaign is still at that version; otherwise 409
 * `version_changed` (the dashboard's edit form, which compared its input with that version).
 */
export async function updateCampaign(
  deps: CampaignDeps,
  projectId: string,
  campaignId: string,
  patch: UpdateCampaignInput,
  opts: { expectedVersion?: number } = {},
): Promise<CampaignView> {
  return changeCampaign(deps, projectId, campaignId, 'campaign.edited', async (client, row, now) => {
    const state = stateOf(row, now);
    if (opts.expectedVersion !== undefined && row.version !== opts.expectedVersion)
      throw conflict('version_changed', 'The campaign was changed meanwhile.', state);
    if (!isEditable(state))
      throw conflict('not_editable', `A campaign that is ${state} cannot be changed.`, state);
    const cur = toRecord(row);
    const pick = <K extends keyof UpdateCampaignInput>(k: K, fallback: CreateCampaignInput[K]) =>
      patch[k] === undefined ? fallback : patch[k];
    const next = {
      name: pick('name', cur.name) as string,
      deviceId: pick('deviceId', cur.deviceId) as string,
      startDate: pick('startDate', cur.startDate) as string,
      endDate: pick('endDate', cur.endDate) as string,
      budgetMode: pick('budgetMode', cur.budgetMode) as 'metered' | 'fixed',
      pricePerConversation: pick('pricePerConversation', cur.pricePerConversation) ?? null,
      fixedPrice: pick('fixedPrice', cur.fixedPrice) ?? null,
      recipientCap: pick('recipientCap', cur.recipientCap) ?? null,
    };
    await checkCampaign(client, projectId, next);
    // A launched campaign must not be moved into the past: that would end it silently.
    if (row.launched_at !== null && Date.parse(next.endDate) <= now.getTime()) {
      throw invalid([
        { pointer: '/endDate', rule: 'future', message: 'must be in the future once launched' },
      ]);
    }
    const detail = editDetail([
      { words: 'name', before: cur.name, after: next.name, showBefore: true },
      { words: 'device', before: cur.deviceId, after: next.deviceId },
      { words: 'start date', before: cur.startDate, after: next.startDate, same: sameInstant },
      { words: 'end date', before: cur.endDate, after: next.endDate, same: sameInstant },
      { words: 'budget mode', before: cur.budgetMode, after: next.budgetMode },
      {
        words: 'price per conversation',
        before: cur.pricePerConversation ?? null,
        after: next.pricePerConversation,
      },
      { words: 'fixed price', before: cur.fixedPrice ?? null, after: next.fixedPrice },
      { words: 'recipient cap', before: cur.recipientCap ?? null, after: next.recipientCap },
    ]);
    if (detail === null) return UNCHANGED;
    await client.query(
      `UPDATE campaigns SET name = $2, device_id = $3, start_date = $4, end_date = $5, budget_mode = $6,
         price_per_conversation = $7, fixed_price = $8, recipient_cap = $9 WHERE id = $1`,
      [
        campaignId,
        next.name,
        next.deviceId,
        new Date(next.startDate),
        new Date(next.endDate),
        next.budgetMode,
        next.pricePerConversation,
        next.fixedPrice,
        next.recipientCap,
      ],
    );
    return detail;
  });
}

/** Launches a draft campaign; refused (409) once launched or when its end date has passed. */
export async function launchCampaign(
  deps: CampaignDeps,
  projectId: string,
  campaignId: string,
): Promise<CampaignView> {
  return changeCampaign(deps, projectId, campaignId, 'campaign.launched', async (client, row, now) => {
    const state = stateOf(row, now);
    if (row.launched_at !== null)
      throw conflict('already_launched', 'The campaign was already launched.', state);
    if (row.end_date.getTime() <= now.getTime()) {
      throw conflict('end_date_passed', 'The campaign cannot be launched: its end date has passed.', state);
    }
    await client.query('UPDATE campaigns SET launched_at = $2 WHERE id = $1', [campaignId, now]);
  });
}

/** Halts an upcoming or active campaign; it then counts as completed from this instant. */
export async function haltCampaign(
  deps: CampaignDeps,
  projectId: string,
  campaignId: string,
): Promise<CampaignView> {
  return changeCampaign(deps, projectId, campaignId, 'campaign.halted', async (client, row, now) => {
    const state = stateOf(row, now);
    if (state !== 'upcoming' && state !== 'active') {
      throw conflict('not_haltable', `A campaign that is ${state} cannot be halted.`, state);
    }
    await client.query('UPDATE campaigns SET halted_at = $2 WHERE id = $1', [campaignId, now]);
  });
}

/**
 * Deletes a campaign that was never launched: every read leaves it out at once, and its tombstone
 * snapshot has the recipient service delete its recipients. A launched campaign may have had
 * conversations, which its statements and usage keep: 409 `not_deletable` (halt it instead).
 */
export async function deleteCampaign(
  deps: CampaignDeps,
  projectId: string,
  campaignId: string,
): Promise<void> {
  await changeCampaignRow(deps, projectId, campaignId, 'campaign.deleted', async (client, row, now) => {
    if (row.launched_at !== null) {
      const state = stateOf(row, now);
      throw conflict(
        'not_deletable',
        `A campaign that is ${state} cannot be deleted: only a draft can.`,
        state,
      );
    }
    await client.query('UPDATE campaigns SET deleted_at = $2 WHERE id = $1', [campaignId, now]);
  });
}

/**
 * Adds conversations to a metered campaign's budget, capturing the price in force: the
 * one given for this top-off, else the campaign's current price.
 */
export async function addTopOff(
  deps: CampaignDeps,
  projectId: string,
  campaignId: string,
  input: { conversations: number; pricePerConversation?: number | null },
): Promise<{ topOff: TopOff; campaign: CampaignView }> {
  let topOff: TopOff | undefined;
  const campaign = await changeCampaign(
    deps,
    projectId,
    campaignId,
    'campaign.topped_off',
    async (client, row, now) => {
      if (row.budget_mode !== 'metered') {
        throw conflict('not_metered', 'Only metered campaigns take top-offs.', stateOf(row, now));
      }
      const price = input.pricePerConversation ?? num(row.price_per_conversation);
      const { rows } = await client.query<{ id: string; created_at: Date }>(
        `INSERT INTO top_offs (id, campaign_id, conversations, price_per_conversation, created_at)
       VALUES ($1, $2, $3, $4, $5) RETURNING id, created_at`,
        [newId('top'), campaignId, input.conversations, price, now],
      );
      topOff = {
        id: rows[0].id,
        conversations: input.conversations,
        pricePerConversation: price,
        createdAt: rows[0].created_at.toISOString(),
      };
      return input.conversations === 1 ? '1 conversation' : `${input.conversations} conversations`;
    },
  );
  return { topOff: topOff as TopOff, campaign };
}

/** The campaign's top-offs, oldest first. */
export async function listTopOffs(deps: Pick<CampaignDeps, 'pool'>, campaignId: string): Promise<TopOff[]> {
  const { rows } = await deps.pool.query<{
    id: string;
    conversations: number;
    price_per_conversation: string | null;
    created_at: Date;
  }>('SELECT * FROM top_offs WHERE campaign_id = $1 ORDER BY created_at, seq', [campaignId]);
  return rows.map((r) => ({
    id: r.id,
    conversations: r.conversations,
    pricePerConversation: num(r.price_per_conversation),
    createdAt: r.created_at.toISOString(),
  }));
}

/** One campaign of the project with state, timing, allowance and top-offs at the clock's now; 404 otherwise. */
export async function getCampaign(
  deps: CampaignDeps,
  projectId: string,
  campaignId: string,
): Promise<CampaignView> {
  const row = await campaignRow(deps, projectId, campaignId);
  return { ...toView(row, deps.clock()), topOffs: await listTopOffs(deps, campaignId) };
}

/** One campaign row of the project with its usage and top-off sum; 404 otherwise. */
async function campaignRow(deps: CampaignDeps, projectId: string, campaignId: string): Promise<UsageRow> {
  const { rows } = await deps.pool.query<UsageRow>(
    `${SELECT_WITH_USAGE} WHERE c.id = $1 AND c.project_id = $2 AND ${LIVE}`,
    [campaignId, projectId],
  );
  if (rows.length === 0) throw campaignNotFound(campaignId);
  return rows[0];
}

/** The project's campaigns ordered by createdAt then id, optionally only those in `state` now. */
export async function listCampaigns(
  deps: CampaignDeps,
  projectId: string,
  state?: CampaignState,
): Promise<CampaignView[]> {
  await assertProject(deps.pool, projectId);
  // Ids compared as bytes: a database created with a language's locale would otherwise order
  // mixed-case ids differently from one created with C.
  const { rows } = await deps.pool.query<UsageRow>(
    `${SELECT_WITH_USAGE} WHERE c.project_id = $1 AND ${LIVE} ORDER BY c.created_at, c.id COLLATE "C"`,
    [projectId],
  );
  // One instant for the whole list, so every campaign is judged at the same moment.
  const now = deps.clock();
  const views = rows.map((r) => toView(r, now));
  return state ? views.filter((v) => v.state === state) : views;
}

/** The allowance of one campaign of the project. */
export async function getAllowance(
  deps: CampaignDeps,
  projectId: string,
  campaignId: string,
): Promise<Allowance> {
  const row = await campaignRow(deps, projectId, campaignId);
  return computeAllowance(row.budget_mode, Number(row.used), num(row.included));
}

/**
 * The remaining budget of every capped campaign still running or to come (launched, metered,
 * topped off, not completed at the clock's now), in one query; the metrics scrape reads it.
 */
export async function remainingBudgets(
  deps: Pick<CampaignDeps, 'pool' | 'clock'>,
): Promise<Array<{ campaignId: string; remaining: number }>> {
  const { rows } = await deps.pool.query<UsageRow>(
    `${SELECT_WITH_USAGE}
      WHERE c.launched_at IS NOT NULL AND c.budget_mode = 'metered'
        AND EXISTS (SELECT 1 FROM top_offs t WHERE t.campaign_id = c.id)
      ORDER BY c.id`,
  );
  const now = deps.clock();
  return rows
    .map((r) => toView(r, now))
    .filter((v) => v.state !== 'completed' && v.allowance.remaining !== null)
    .map((v) => ({ campaignId: v.id, remaining: v.allowance.remaining as number }));
}
