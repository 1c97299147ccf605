import {
  type CampaignFacts,
  type CampaignSnapshot,
  deriveCampaignState,
  isEditable,
  LIMITS,
  type RecipientChanged,
  type RecipientMessage,
  validator,
} from '@outreach/contracts';
import {
  AppError,
  type Clock,
  campaignNotFound,
  enqueueAll,
  type Logger,
  newId,
  newLinkToken,
  type Outbox,
  type OutboxRelay,
  recipientsNotEditable,
  withTransaction,
} from '@outreach/platform';
import type { Pool, PoolClient } from 'pg';
import {
  addToRecipientCount,
  applyCampaignSnapshot,
  type CampaignAuthority,
  type CampaignLookup,
  type CampaignReplica,
  deletedCampaignsWithRecipients,
  findReplica,
  lockProjectReplicas,
} from '../campaigns/campaign-replicas';
import {
  CreatedBefore,
  type CreateKey,
  claimCreate,
  recordCreate,
  recordedCreate,
} from './idempotent-creates';
import {
  checkStoredInstructions,
  type FieldProblem,
  type InjectionMode,
  prepareInstructions,
} from './instructions';
import {
  checkWindowPair,
  fieldProblem,
  type ItemOutcome,
  type NewRecipient,
  parseCreateItem,
  problemsToFieldProblem,
} from './items';
import { coalescedRecipientReads } from './recipient-reads';
import {
  bumpRecipientCount,
  campaignsOfRecipients,
  countByCampaign,
  countMatching,
  type DeletedRow,
  deleteRecipients,
  findByExternalIds,
  findByToken,
  findByTokens,
  findRecipient,
  type InsertRow,
  insertRecipients,
  listRecipients,
  type PatchField,
  type RecipientRow,
  toMessage,
  updateRecipient,
} from './recipients.repository';
import type { SafetyRule } from './safety';

/** What the recipient service needs, injected. */
export interface RecipientServiceDeps {
  pool: Pool;
  clock: Clock;
  logger: Logger;
  publicBaseUrl: string;
  safetyRules: readonly SafetyRule[];
  lookupCampaign: CampaignLookup;
  /** The campaign service's facts, which every write also judges by (none: replicas alone). */
  campaignAuthority?: CampaignAuthority;
  /** Where RecipientChanged events go, in the change's own transaction, and its relay. */
  changes: { subject: string; relay: Pick<OutboxRelay, 'kick'> };
  /** Recipients of a deleted campaign deleted per transaction (default ERASE_CHUNK). */
  eraseChunk?: number;
}

/** Recipients of a deleted campaign deleted per transaction. */
export const ERASE_CHUNK = 1000;

/** The recipient service's outbox (migration 008). */
export const RECIPIENT_OUTBOX: Outbox = {
  table: 'recipients.outbox',
  msgIdPrefix: 'recipients-outbox',
  relayLock: 'recipients:outbox-relay',
  // Only one recipient's changes need their order: a bulk delete's thousands of events go out
  // side by side rather than one acknowledgement at a time ahead of every later change.
  orderKey: ({ payload }) => (payload as RecipientChanged).recipientId,
};

/** One create result as it travels over gRPC (error details as JSON text). */
export interface CreateResult {
  status: 'created' | 'duplicate' | 'error';
  index: number;
  externalId?: string;
  id?: string;
  recipient?: RecipientMessage;
  code?: string;
  error?: string;
  detailsJson?: string;
}

/** The create response before the gateway picks 201 or 422. */
export interface CreateOutcome {
  created: number;
  failed: number;
  total: number;
  results: CreateResult[];
}

/** Longest search text a list accepts (labels are at most this long too). */
const MAX_SEARCH_LENGTH = LIMITS.labelLength;

/** Fields a PATCH may never change. */
const IMMUTABLE_FIELDS = new Set([
  'id',
  'campaignId',
  'projectId',
  'externalId',
  'metadata',
  'token',
  'link',
  'interactionCount',
  'lastInteractionAt',
  'createdAt',
  'deviceId',
  'distillationStatus',
  'distillationLensId',
  'distillationError',
]);

/** The 409 for a batch that would take the campaign past its recipient cap. */
export function capExceeded(cap: number, existing: number, requested: number): AppError {
  const more = Math.max(cap - existing, 0);
  return new AppError('conflict', 'The batch would exceed the campaign recipient cap.', {
    details: { reason: 'cap_exceeded', cap, existing, requested },
    hint: `The campaign's recipient cap is ${cap} and it holds ${existing} recipients, so at most ${more} more may be sent; this request would create ${requested}. Nothing was created.`,
  });
}

/**
 * The cap a create is held to: the replica's, or the campaign service's when it answered, whichever
 * is lower (null: no cap). A cap changed in the dashboard reaches the replica through the event
 * stream, late while NATS or the outbox is down; the campaign service's answer is at most a second old.
 */
function stricterCap(replica: number | null, campaignService: number | null | undefined): number | null {
  if (campaignService === undefined || campaignService === null) return replica;
  return replica === null ? campaignService : Math.min(replica, campaignService);
}

function recipientNotFound(id: string): AppError {
  return new AppError('not_found', 'Recipient not found in this project.', {
    details: { resource: 'recipient', id },
  });
}

function invalid(problem: FieldProblem): AppError {
  return new AppError('invalid_request', problem.message, { details: problem.details });
}

/**
 * Instants of one batch: the clock's millisecond plus the item's position in
 * microseconds, so that the list order (createdAt, id) keeps the order of the items
 * while every createdAt still reads as the same millisecond.
 */
function batchInstant(millisecond: string, position: number): string {
  return `${millisecond}${String(position).padStart(3, '0')}Z`;
}

// Transactions of one batch at most: another is needed only when a recipient whose externalId
// made the last one skip a row was deleted before it could be read.
const MAX_INSERT_ATTEMPTS = 3;

/** A duplicate that was deleted before the batch could read it: the batch's transaction is redone. */
class VanishedDuplicate extends Error {
  constructor() {
    super('a recipient vanished between the insert that skipped its externalId and its read');
  }
}

/** Runs a batch's transaction again while duplicates vanish under it, up to MAX_INSERT_ATTEMPTS. */
async function retryVanished<T>(transaction: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transaction();
    } catch (err) {
      if (!(err instanceof VanishedDuplicate) || attempt >= MAX_INSERT_ATTEMPTS) throw err;
    }
  }
}

/**
 * Who asks for a change: the public API's writes hold only while the campaign is editable, an
 * operator (the dashboard, the admin API) may close a link or delete a recipient at any time.
 */
export interface OperatorOverride {
  byOperator?: boolean;
}

/** A patch that only disables or enables the link. */
export function isActivationOnly(patch: Record<string, unknown>): boolean {
  const fields = Object.keys(patch);
  return fields.length === 1 && fields[0] === 'isActive';
}

/** The recipient service's domain operations. */
export function createRecipientService(deps: RecipientServiceDeps) {
  const { pool, clock, publicBaseUrl } = deps;
  const readRecipient = coalescedRecipientReads(pool);

  const stateOf = (c: CampaignFacts) => deriveCampaignState(c, clock());
  const assertEditable = (c: CampaignFacts & { id: string }) => {
    const state = stateOf(c);
    if (!isEditable(state)) throw recipientsNotEditable(c.id, state);
  };
  // The replica may not have heard of a launch or a halt yet: what the campaign service says
  // refuses a write the replica would let through. Asked before the write's transaction, so no
  // lock is held over the call. Returns what it said (undefined when it could not be asked).
  // With `gone`, the campaign must exist there too: one the campaign service no longer knows was
  // deleted, however long its tombstone takes to reach the replica (NATS or the outbox down), and
  // `gone` is the refusal then.
  const confirmEditable = async (projectId: string, campaignId: string, gone?: () => AppError) => {
    const answered = await deps.campaignAuthority?.(projectId, campaignId);
    const current = answered?.get(campaignId);
    if (answered && !current && gone) throw gone();
    if (current) assertEditable({ ...current, id: campaignId });
    return current;
  };

  /** Writes the RecipientChanged events of `rows` inside the change's transaction. */
  const announce = (client: PoolClient, rows: DeletedRow[], change: RecipientChanged['change']) => {
    const at = clock().toISOString();
    return enqueueAll(
      RECIPIENT_OUTBOX,
      client,
      rows.map((r) => ({
        subject: deps.changes.subject,
        payload: {
          recipientId: r.id,
          campaignId: r.campaign_id,
          projectId: r.project_id,
          change,
          at,
        } satisfies RecipientChanged,
      })),
    );
  };

  return {
    /**
     * Applies a campaign snapshot to the replica. Once a deleted campaign's tombstone is applied no
     * batch can join it (a create locks the replica row and finds it deleted); its recipients go
     * later, in `eraseDeletedCampaigns`, so that a large draft never holds up the snapshots behind it.
     */
    async applyCampaignSnapshot(snapshot: CampaignSnapshot): Promise<void> {
      await applyCampaignSnapshot(pool, snapshot);
    },

    /**
     * Deletes the recipients of every deleted campaign, those let in before the replica heard of
     * the deletion included: ERASE_CHUNK to a transaction, each under the replica's row lock and
     * announced, so that a large draft never holds the lock long. Whatever a run leaves (a crash, a
     * failure midway) the next one finds, on whichever instance runs it.
     */
    async eraseDeletedCampaigns(): Promise<void> {
      const chunk = deps.eraseChunk ?? ERASE_CHUNK;
      for (const campaignId of await deletedCampaignsWithRecipients(pool)) {
        let total = 0;
        for (;;) {
          const erased = await withTransaction(pool, async (client) => {
            const replica = await findReplica(client, campaignId, true);
            if (!replica?.deletedAt) return 0;
            const rows = await deleteRecipients(client, replica.projectId, {
              campaignIds: [replica.id],
              limit: chunk,
            });
            await bumpRecipientCount(client, replica.id, -rows.length);
            await announce(client, rows, 'deleted');
            return rows.length;
          });
          total += erased;
          if (erased > 0) deps.changes.relay.kick();
          if (erased < chunk) break;
        }
        if (total > 0)
          deps.logger.info({ campaignId, recipients: total }, "deleted a deleted campaign's recipients");
      }
    },

    /** Creates a batch: per-item validation and dedupe, then one atomic cap check and insert. */
    async createRecipients(
      projectId: string,
      campaignId: string,
      itemsJson: string[],
      key?: CreateKey,
    ): Promise<CreateOutcome & { replayed?: true }> {
      // A create already made under the key is answered as it was, whatever has changed since
      // (the campaign launched, the recipients deleted).
      const replay = async () => {
        const recorded = key && ((await recordedCreate(pool, key, clock())) as CreateOutcome | null);
        return recorded ? { ...recorded, replayed: true as const } : null;
      };
      const before = await replay();
      if (before) return before;
      if (itemsJson.length < 1 || itemsJson.length > LIMITS.itemsPerCreate) {
        throw invalid(
          fieldProblem(
            '/items',
            itemsJson.length < 1 ? 'minItems' : 'maxItems',
            `must hold 1 to ${LIMITS.itemsPerCreate} items`,
          ),
        );
      }
      const campaign = await deps.lookupCampaign(projectId, campaignId);
      assertEditable(campaign);
      const told = await confirmEditable(projectId, campaignId, () => campaignNotFound(campaignId));

      const outcomes: ItemOutcome[] = itemsJson.map((json, i) => parseCreateItem(json, i, deps.safetyRules));
      const results: CreateResult[] = new Array(itemsJson.length);
      const base = clock();
      // Every item of the batch reads as this millisecond (see batchInstant).
      const millisecond = base.toISOString().slice(0, 23);
      const createdAt = new Date(`${millisecond}Z`);
      const candidates: { index: number; row: InsertRow }[] = [];
      // Within the batch the first valid occurrence of an externalId wins.
      const firstByExternalId = new Map<string, number>();
      const laterDuplicates: { index: number; first: number }[] = [];
      outcomes.forEach((o, index) => {
        if (!o.ok) {
          const { details, ...rest } = o.error;
          results[index] = { ...rest, detailsJson: JSON.stringify(details) };
          return;
        }
        const ext = o.value.externalId;
        if (ext !== null) {
          const first = firstByExternalId.get(ext);
          if (first !== undefined) {
            laterDuplicates.push({ index, first });
            return;
          }
          firstByExternalId.set(ext, index);
        }
        candidates.push({ index, row: insertRowOf(o.value, batchInstant(millisecond, index)) });
      });

      // Rows with an externalId go in externalId order: concurrent batches that share
      // externalIds then wait on each other's uniqueness checks in one order, never in a cycle.
      const ordered = candidates
        .filter((c) => c.row.externalId !== null)
        .sort((a, b) => (a.row.externalId! < b.row.externalId! ? -1 : 1))
        .concat(candidates.filter((c) => c.row.externalId === null));
      // The answer of a committed transaction: its duplicates, creations and later duplicates.
      const answer = (done: {
        created: typeof candidates;
        existing: Map<string, string>;
        device: string;
      }) => {
        const out = results.slice();
        for (const c of ordered) {
          const id = c.row.externalId === null ? undefined : done.existing.get(c.row.externalId);
          if (id !== undefined) {
            out[c.index] = { status: 'duplicate', index: c.index, externalId: c.row.externalId!, id };
          }
        }
        for (const c of done.created) {
          const recipient = toMessage(
            rowOf(c.row, projectId, campaignId, done.device, createdAt),
            publicBaseUrl,
          );
          out[c.index] = {
            status: 'created',
            index: c.index,
            externalId: recipient.externalId,
            id: recipient.id,
            recipient,
          };
        }
        for (const d of laterDuplicates) {
          const ext = (outcomes[d.index] as Extract<ItemOutcome, { ok: true }>).value.externalId!;
          const first = candidates.find((c) => c.index === d.first)!;
          const id = done.existing.get(ext) ?? first.row.id;
          out[d.index] = { status: 'duplicate', index: d.index, externalId: ext, id };
        }
        const created = done.created.length;
        return { created, failed: itemsJson.length - created, total: itemsJson.length, results: out };
      };
      // The campaign row is locked only by the count update at the end, so concurrent batches
      // into one campaign insert in parallel and serialise only for the update and commit. The
      // cap is checked on the updated count under that lock; past it, the rollback undoes the
      // inserts too, so a batch is still all or nothing. A keyed create claims its key first.
      const made = retryVanished(() =>
        withTransaction(pool, async (client) => {
          if (key) await claimCreate(client, key, clock());
          const inserted = await insertRecipients(
            client,
            projectId,
            campaignId,
            ordered.map((c) => c.row),
          );
          const toCreate: typeof candidates = [];
          const skipped: typeof candidates = [];
          for (const c of ordered) {
            const ext = c.row.externalId;
            if (ext === null || inserted.externalIds.has(ext)) toCreate.push(c);
            else skipped.push(c);
          }
          // Only an externalId already in the campaign makes the insert skip a row.
          if (ordered.length - skipped.length !== inserted.count)
            throw new Error('recipient insert skipped rows');
          const existing = await findByExternalIds(
            client,
            campaignId,
            skipped.map((c) => c.row.externalId!),
          );
          // A recipient deleted (and committed) between the insert that skipped its externalId and
          // this read is gone: its item is no duplicate after all. The whole batch goes in again,
          // in externalId order, rather than that item alone after the rest, which could take
          // uniqueness locks out of order and deadlock with a concurrent batch.
          if (existing.size < skipped.length) throw new VanishedDuplicate();
          const now = await addToRecipientCount(client, campaignId, toCreate.length);
          if (!now) throw new AppError('not_found');
          // Deleted while this batch was checked: the tombstone holds the row lock's truth.
          if (now.deletedAt) throw campaignNotFound(campaignId);
          // Facts may have changed while we validated; the locked row is the truth.
          assertEditable(now);
          // A batch that adds nobody takes the campaign past nothing, even where the dashboard has
          // lowered the cap below the count: its duplicates are the answer, as on any retry.
          const cap = stricterCap(now.recipientCap, told?.recipientCap);
          if (toCreate.length > 0 && cap !== null && now.recipientCount > cap) {
            throw capExceeded(cap, now.recipientCount - toCreate.length, toCreate.length);
          }
          const outcome = answer({ created: toCreate, existing, device: now.deviceId });
          if (key) await recordCreate(client, key, outcome);
          return outcome;
        }),
      );
      try {
        return await made;
      } catch (err) {
        if (!(err instanceof CreatedBefore)) throw err;
        // The create the client gave up on committed while this one waited for its key.
        const after = await replay();
        if (!after) throw err;
        return after;
      }
    },

    /**
     * A page of a campaign's recipients; total is the campaign's recipient count. With `search`
     * or `countMatches`, `matched` says how many recipients pass the filters (search, active).
     */
    async listRecipients(
      projectId: string,
      campaignId: string,
      page: { limit: number; offset: number; active?: boolean; search?: string; countMatches?: boolean },
    ): Promise<{ total: number; recipients: RecipientMessage[]; matched?: number }> {
      const limit = page.limit === 0 ? LIMITS.listDefault : page.limit;
      if (!Number.isInteger(limit) || limit < 1 || limit > LIMITS.listMax) {
        const rule = limit < 1 ? 'minimum' : 'maximum';
        throw invalid(fieldProblem('/limit', rule, `must be an integer from 1 to ${LIMITS.listMax}`));
      }
      if (!Number.isInteger(page.offset) || page.offset < 0) {
        throw invalid(fieldProblem('/offset', 'minimum', 'must be a non-negative integer'));
      }
      const search = page.search?.trim() || undefined;
      if (search !== undefined && search.length > MAX_SEARCH_LENGTH) {
        throw invalid(
          fieldProblem('/search', 'maxLength', `must be at most ${MAX_SEARCH_LENGTH} characters`),
        );
      }
      const campaign = await deps.lookupCampaign(projectId, campaignId);
      const filter = { active: page.active, search };
      const [rows, matched] = await Promise.all([
        listRecipients(pool, campaignId, { ...filter, limit, offset: page.offset }),
        search === undefined && !page.countMatches ? undefined : countMatching(pool, campaignId, filter),
      ]);
      const recipients = rows.map((r) => toMessage(r, publicBaseUrl));
      return { total: campaign.recipientCount, recipients, ...(matched === undefined ? {} : { matched }) };
    },

    /** One recipient of the project. */
    async getRecipient(projectId: string, id: string): Promise<RecipientMessage> {
      const row = await readRecipient(projectId, id);
      if (!row) throw recipientNotFound(id);
      return toMessage(row, publicBaseUrl);
    },

    /**
     * Applies a PATCH body (JSON text) while the campaign is editable; an operator's patch of
     * `isActive` alone at any time, so that a link can be closed (or opened again) mid-campaign.
     */
    async updateRecipient(
      projectId: string,
      id: string,
      patchJson: string,
      by: OperatorOverride = {},
    ): Promise<RecipientMessage> {
      const patch = parsePatch(patchJson);
      const anyState = by.byOperator === true && isActivationOnly(patch);
      const target = await findRecipient(pool, projectId, id);
      if (!target) throw recipientNotFound(id);
      if (!anyState) await confirmEditable(projectId, target.campaign_id, () => recipientNotFound(id));
      const row = await withTransaction(pool, async (client) => {
        const current = await findRecipient(client, projectId, id, true);
        if (!current) throw recipientNotFound(id);
        const campaign = await findReplica(client, current.campaign_id);
        if (!campaign) throw recipientNotFound(id);
        if (!anyState) assertEditable(campaign);

        const changes: Partial<Record<PatchField, unknown>> = { ...patch };
        const perWindow =
          'maxInteractionsPerWindow' in patch
            ? patch.maxInteractionsPerWindow
            : current.max_interactions_per_window;
        const windowSeconds = 'windowSeconds' in patch ? patch.windowSeconds : current.window_seconds;
        const pair = checkWindowPair(
          (perWindow as number | null) ?? null,
          (windowSeconds as number | null) ?? null,
        );
        if (pair) throw invalid(pair);

        const mode = (patch.injectionMode as InjectionMode | undefined) ?? current.injection_mode;
        if (typeof patch.injectionInstructions === 'string') {
          const label = 'label' in patch ? (patch.label as string | null) : current.label;
          const prepared = prepareInstructions(
            patch.injectionInstructions,
            mode,
            { externalId: current.external_id, label, metadata: current.metadata },
            deps.safetyRules,
          );
          if ('problem' in prepared) throw invalid(prepared.problem);
          changes.injectionInstructions = prepared.text;
        } else if (patch.injectionInstructions === undefined && mode !== current.injection_mode) {
          // A mode switch alone must still leave the stored text within the new mode's limit.
          const problem = current.injection_instructions
            ? checkStoredInstructions(current.injection_instructions, mode, deps.safetyRules)
            : null;
          if (problem) throw invalid(problem);
        }
        await updateRecipient(client, id, changes);
        const updated = (await findRecipient(client, projectId, id))!;
        await announce(client, [updated], 'updated');
        return updated;
      });
      deps.changes.relay.kick();
      return toMessage(row, publicBaseUrl);
    },

    /**
     * Deletes one recipient while its campaign is editable; an operator's delete at any time, so
     * that a customer's data can be erased (and their link closed) mid-campaign or after it.
     */
    async deleteRecipient(
      projectId: string,
      id: string,
      by: OperatorOverride = {},
    ): Promise<{ success: boolean; id: string }> {
      const anyState = by.byOperator === true;
      const found = await findRecipient(pool, projectId, id);
      if (!found) throw recipientNotFound(id);
      if (!anyState) await confirmEditable(projectId, found.campaign_id, () => recipientNotFound(id));
      const deleted = await withTransaction(pool, async (client) => {
        // Lock order everywhere: campaign row first, then recipient rows.
        const campaign = await findReplica(client, found.campaign_id, true);
        if (!campaign) throw recipientNotFound(id);
        if (!anyState) assertEditable(campaign);
        const rows = await deleteRecipients(client, projectId, { ids: [id], campaignIds: [campaign.id] });
        await bumpRecipientCount(client, campaign.id, -rows.length);
        await announce(client, rows, 'deleted');
        return rows;
      });
      if (deleted.length === 0) throw recipientNotFound(id);
      deps.changes.relay.kick();
      return { success: true, id };
    },

    /** Deletes by ids (one editable campaign) or every recipient of the project's editable campaigns. */
    async bulkDelete(
      projectId: string,
      request: { ids: string[]; all: boolean },
    ): Promise<{ success: boolean; deleted: number; ids: string[]; skippedCampaignIds: string[] }> {
      if (request.all) {
        if (request.ids.length > 0)
          throw invalid(fieldProblem('/', 'oneOf', 'must send either ids or all, not both'));
        const authority = await deps.campaignAuthority?.(projectId);
        const editableNow = (c: CampaignReplica) => {
          const current = authority?.get(c.id);
          return isEditable(stateOf(c)) && (!current || isEditable(stateOf(current)));
        };
        const { deleted, skipped } = await withTransaction(pool, async (client) => {
          const campaigns = await lockProjectReplicas(client, projectId);
          const editable = campaigns.filter(editableNow);
          const skippedIds = campaigns
            .filter((c) => !editableNow(c) && c.recipientCount > 0)
            .map((c) => c.id);
          const rows = await deleteRecipients(client, projectId, { campaignIds: editable.map((c) => c.id) });
          const perCampaign = new Map<string, number>();
          for (const r of rows) perCampaign.set(r.campaign_id, (perCampaign.get(r.campaign_id) ?? 0) + 1);
          for (const [campaignId, n] of perCampaign) await bumpRecipientCount(client, campaignId, -n);
          await announce(client, rows, 'deleted');
          return { deleted: rows, skipped: skippedIds };
        });
        deps.changes.relay.kick();
        return {
          success: true,
          deleted: deleted.length,
          ids: deleted.map((r) => r.id),
          skippedCampaignIds: skipped,
        };
      }

      if (request.ids.length < 1 || request.ids.length > LIMITS.bulkDeleteIds) {
        throw invalid(
          fieldProblem(
            '/ids',
            request.ids.length < 1 ? 'minItems' : 'maxItems',
            `must hold 1 to ${LIMITS.bulkDeleteIds} ids`,
          ),
        );
      }
      const ids = [...new Set(request.ids)];
      const byCampaign = await campaignsOfRecipients(pool, projectId, ids);
      if (byCampaign.size > 1) {
        throw new AppError('invalid_request', 'The ids belong to more than one campaign.', {
          details: {
            pointer: '/ids',
            reason: 'multiple_campaigns',
            campaignIds: [...byCampaign.keys()].sort(),
          },
          hint: 'Send the ids of one campaign per request.',
        });
      }
      if (byCampaign.size === 0) return { success: true, deleted: 0, ids: [], skippedCampaignIds: [] };
      const [campaignId] = [...byCampaign.keys()];
      await confirmEditable(projectId, campaignId);
      const deleted = await withTransaction(pool, async (client) => {
        const campaign = await findReplica(client, campaignId, true);
        if (!campaign) return [];
        assertEditable(campaign);
        const rows = await deleteRecipients(client, projectId, { ids, campaignIds: [campaignId] });
        await bumpRecipientCount(client, campaignId, -rows.length);
        await announce(client, rows, 'deleted');
        return rows;
      });
      deps.changes.relay.kick();
      return {
        success: true,
        deleted: deleted.length,
        ids: deleted.map((r) => r.id),
        skippedCampaignIds: [],
      };
    },

    /** Recipient counts per campaign of the project (0 for campaigns without any). */
    async countRecipients(projectId: string, campaignIds: string[]): Promise<Record<string, number>> {
      const counts = await countByCampaign(pool, projectId, campaignIds);
      return Object.fromEntries(campaignIds.map((id) => [id, counts.get(id) ?? 0]));
    },

    /** The recipient behind a link token. */
    async resolveLink(token: string): Promise<{ recipient: RecipientMessage; token: string }> {
      const row = token ? await findByToken(pool, token) : null;
      if (!row) throw new AppError('not_found', 'Link not found.', { details: { resource: 'link' } });
      return { recipient: toMessage(row, publicBaseUrl), token: row.token };
    },

    /** Each token's recipient as resolveLink finds it, in order; none where no recipient has it. */
    async resolveLinks(tokens: string[]): Promise<{ recipient?: RecipientMessage; token: string }[]> {
      const rows = await findByTokens(pool, [...new Set(tokens.filter(Boolean))]);
      const byToken = new Map(rows.map((row) => [row.token, row]));
      return tokens.map((token) => {
        const row = byToken.get(token);
        return row ? { recipient: toMessage(row, publicBaseUrl), token: row.token } : { token };
      });
    },
  };
}

export type RecipientService = ReturnType<typeof createRecipientService>;

/** Parses and validates a PATCH body: 400 on malformed JSON, immutable or unknown fields. */
export function parsePatch(patchJson: string): Record<string, unknown> {
  let patch: unknown;
  try {
    patch = JSON.parse(patchJson);
  } catch {
    throw invalid(fieldProblem('/', 'json', 'is not valid JSON'));
  }
  if (patch !== null && typeof patch === 'object' && !Array.isArray(patch)) {
    const immutable = Object.keys(patch).filter((k) => IMMUTABLE_FIELDS.has(k));
    if (immutable.length > 0) {
      const problems = immutable.map((k) => ({
        pointer: `/${k}`,
        rule: 'immutable',
        message: 'cannot be changed',
      }));
      throw invalid(problemsToFieldProblem(problems));
    }
  }
  const problems = validator('patch')(patch);
  if (problems.length > 0) throw invalid(problemsToFieldProblem(problems, 'the body'));
  return patch as Record<string, unknown>;
}

/**
 * A validated item with its new id, token and instant. Written out field by field: an object
 * spread followed by more properties takes V8's slow path, about 3 µs a row here.
 */
function insertRowOf(v: NewRecipient, createdAt: string): InsertRow {
  return {
    externalId: v.externalId,
    label: v.label,
    metadata: v.metadata,
    isActive: v.isActive,
    injectionMode: v.injectionMode,
    injectionInstructions: v.injectionInstructions,
    maxTotalInteractions: v.maxTotalInteractions,
    maxInteractionsPerWindow: v.maxInteractionsPerWindow,
    windowSeconds: v.windowSeconds,
    disabledMessage: v.disabledMessage,
    cooldownMessage: v.cooldownMessage,
    id: newId('rcp'),
    token: newLinkToken(),
    createdAt,
  };
}

/**
 * The row a just-inserted recipient has, without reading it back. `createdAt` is the
 * batch's millisecond: the stored instant adds microseconds that a Date does not keep.
 */
function rowOf(
  row: InsertRow,
  projectId: string,
  campaignId: string,
  deviceId: string,
  createdAt: Date,
): RecipientRow {
  return {
    id: row.id,
    project_id: projectId,
    campaign_id: campaignId,
    token: row.token,
    external_id: row.externalId,
    label: row.label,
    metadata: row.metadata,
    is_active: row.isActive,
    injection_mode: row.injectionMode,
    injection_instructions: row.injectionInstructions,
    max_total_interactions: row.maxTotalInteractions,
    max_interactions_per_window: row.maxInteractionsPerWindow,
    window_seconds: row.windowSeconds,
    interaction_count: 0,
    last_interaction_at: null,
    disabled_message: row.disabledMessage,
    cooldown_message: row.cooldownMessage,
    distillation_status: 'none',
    distillation_lens_id: null,
    distillation_error: null,
    created_at: createdAt,
    device_id: deviceId,
  };
}
