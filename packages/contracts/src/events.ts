/**
 * NATS subjects and event payloads. Two JetStream streams (see platform `ensureStreams`):
 * `<prefix>.state.>` keeps the latest snapshot per entity (a compacted log any service can
 * rebuild its view from), `<prefix>.events.>` keeps facts in order.
 */
export function subjects(prefix: string) {
  return {
    campaignState: (id: string) => `${prefix}.state.campaign.${id}`,
    campaignStateAll: `${prefix}.state.campaign.*`,
    deviceState: (id: string) => `${prefix}.state.device.${id}`,
    deviceStateAll: `${prefix}.state.device.*`,
    apiKeyState: (id: string) => `${prefix}.state.apikey.${id}`,
    apiKeyStateAll: `${prefix}.state.apikey.*`,
    recipientChanged: `${prefix}.events.recipient.changed`,
    usageAdmitted: `${prefix}.events.usage.admitted`,
    usageAdmittedBatch: `${prefix}.events.usage.batches`,
    usageStarts: `${prefix}.events.usage.starts`,
    campaignLifecycle: `${prefix}.events.campaign.lifecycle`,
  };
}

/** Everything other services may know of a campaign; `version` only grows. */
export interface CampaignSnapshot {
  id: string;
  projectId: string;
  name: string;
  deviceId: string;
  budgetMode: 'metered' | 'fixed';
  startDate: string;
  endDate: string;
  launchedAt: string | null;
  haltedAt: string | null;
  recipientCap: number | null;
  pricePerConversation: number | null;
  fixedPrice: number | null;
  /** Sum of top-offs; null when there is none (a metered campaign is then unlimited). */
  includedConversations: number | null;
  createdAt: string;
  version: number;
  /**
   * Set once an operator deleted the (draft) campaign: a tombstone, kept so that every replica
   * learns it is gone. Absent from snapshots published before deletion existed.
   */
  deletedAt?: string | null;
}

/** One knowledge entry of a device. */
export interface KnowledgeEntry {
  id: string;
  title: string;
  content: string;
}

/** The channel a campaign renders through. */
export interface DeviceSnapshot {
  id: string;
  projectId: string;
  name: string;
  isActive: boolean;
  /** CIDR blocks; empty means every address is allowed. */
  ipAllowList: string[];
  languages: string[];
  defaultLanguage: string;
  styling: { title?: string; primaryColor?: string; backgroundColor?: string; logoUrl?: string };
  voice: { enabled: boolean; voiceName?: string };
  persona: string;
  customInstructions: string;
  knowledge: KnowledgeEntry[];
  version: number;
}

/** An API key's revocation state, published so gateways drop it from their caches at once. */
export interface ApiKeySnapshot {
  id: string;
  projectId: string;
  revoked: boolean;
  version: number;
}

/** A recipient changed (updated, disabled, deleted); link caches drop it. */
export interface RecipientChanged {
  recipientId: string;
  campaignId: string;
  projectId: string;
  /**
   * The link's token, only in events of older versions: a token is a credential, and the event
   * waits in the outbox and the stream for days, while link caches drop a recipient by its id.
   */
  token?: string;
  change: 'updated' | 'deleted';
  at: string;
}

/** One conversation admitted on a link; consumers apply it once per conversationId. */
export interface UsageAdmitted {
  conversationId: string;
  recipientId: string;
  campaignId: string;
  projectId: string;
  startedAt: string;
}

/**
 * Conversations a link runtime admitted, announced together (the writes of up to
 * USAGE_PUBLISH_MS in one message, not one per conversation) on their own subject,
 * `usageAdmittedBatch`: a
 * consumer of an older version, which reads `usageAdmitted` and knows only single events, never
 * receives one. Consumers apply each conversation once per conversationId, so a batch
 * republished after a crash, or a conversation also announced by a single event, counts once.
 * Link runtimes now write and announce `UsageStarts`; they republish a batch in this form only
 * when an older version wrote it so.
 */
export interface UsageAdmittedBatch {
  batchId: string;
  conversations: UsageAdmitted[];
}

/**
 * How usage consumers batch events (the platform's `consumeDurableBatch` options): usage must
 * show within a second, so an event may wait 50 ms for others to be applied in one statement.
 */
export const USAGE_BATCHING = { maxBatch: 256, maxWaitMs: 50 } as const;

/**
 * Reads every conversation a usage event reports with `parse`: a batch's list, or the event
 * itself when it is a single UsageAdmitted (as link runtimes of an older version publish). A
 * conversation `parse` refuses would fail every batch it is in, so it is left out; undefined
 * when none is left, so the event counts as malformed.
 */
export function readAdmitted<T>(
  event: unknown,
  parse: (conversation: unknown) => T | undefined,
): T[] | undefined {
  const batch = event as Partial<UsageAdmittedBatch> | null;
  const conversations: unknown[] = Array.isArray(batch?.conversations) ? batch.conversations : [event];
  const read = conversations.flatMap((c) => parse(c) ?? []);
  return read.length > 0 ? read : undefined;
}

/** The conversations one recipient started in one written batch: when each started (ms since the epoch). */
export interface RecipientStarts {
  recipientId: string;
  campaignId: string;
  projectId: string;
  startedAtMs: number[];
}

/** One durable write of admitted conversations (a row of the link runtime's outbox), by recipient. */
export interface UsageStartsBatch {
  batchId: string;
  recipients: RecipientStarts[];
}

/**
 * Written batches of conversations announced together (`usageStarts`), each by recipient with
 * its start instants and without conversation ids. Consumers apply each batch once per
 * `batchId`, whichever event brings it (batches are announced together under `eventId`, and a
 * batch whose announcement was not confirmed is republished alone under its own id), so they
 * record one row per batch instead of one per conversation. Link runtimes publish a batch on
 * this subject only when they wrote it in this form: a batch an older version wrote as a
 * `UsageAdmittedBatch` is republished on that subject, so no conversation reaches both.
 */
export interface UsageStarts {
  eventId: string;
  batches: UsageStartsBatch[];
}

/**
 * The batches of a `UsageStarts` event that can be applied: a batch with anything malformed in
 * it would fail every delivery it is in, so it is left out whole; undefined when none is left,
 * so the event counts as malformed. Ids holding NUL are refused (PostgreSQL text cannot).
 */
export function readUsageStarts(event: unknown): UsageStartsBatch[] | undefined {
  const batches = (event as Partial<UsageStarts> | null)?.batches;
  if (!Array.isArray(batches)) return undefined;
  const read = batches.filter(isUsageStartsBatch);
  return read.length > 0 ? read : undefined;
}

/**
 * Each batch once, the first occurrence winning: one delivery may bring a batch twice (announced
 * with others, and republished alone), always with the same content.
 */
export function distinctBatches(batches: readonly UsageStartsBatch[]): UsageStartsBatch[] {
  const seen = new Set<string>();
  return batches.filter((b) => !seen.has(b.batchId) && seen.add(b.batchId));
}

const isId = (value: unknown): value is string =>
  typeof value === 'string' && value.length > 0 && !value.includes('\0');

function isUsageStartsBatch(value: unknown): value is UsageStartsBatch {
  const batch = value as Partial<UsageStartsBatch> | null;
  return isId(batch?.batchId) && Array.isArray(batch.recipients) && batch.recipients.every(isRecipientStarts);
}

function isRecipientStarts(value: unknown): value is RecipientStarts {
  const r = value as Partial<RecipientStarts> | null;
  return (
    isId(r?.recipientId) &&
    isId(r.campaignId) &&
    isId(r.projectId) &&
    Array.isArray(r.startedAtMs) &&
    r.startedAtMs.length > 0 &&
    r.startedAtMs.every((ms) => Number.isSafeInteger(ms) && ms >= 0)
  );
}

/** The scheduler's notice that a campaign started or ended at an instant. */
export interface CampaignLifecycleEvent {
  campaignId: string;
  projectId: string;
  transition: 'started' | 'ended';
  at: string;
}
