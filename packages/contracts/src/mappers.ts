import type { Allowance__Output as AllowanceMessage } from './generated/outreach/v1/Allowance';
import type { Campaign__Output as CampaignMessage } from './generated/outreach/v1/Campaign';
import type { CreateResult__Output as CreateResultMessage } from './generated/outreach/v1/CreateResult';
import type { Recipient__Output as RecipientMessage } from './generated/outreach/v1/Recipient';

// The one mapping from gRPC messages to the JSON shapes of the HTTP APIs (v1 and admin).

// Proto3 `optional` fields arrive as undefined when unset; the JSON API says null.
const orNull = <T>(v: T | undefined): T | null => (v === undefined ? null : v);

/** A recipient in the list-entry shape (list, get, update responses). */
export function toListEntry(r: RecipientMessage) {
  return {
    id: r.id,
    campaignId: r.campaignId,
    externalId: orNull(r.externalId),
    label: orNull(r.label),
    isActive: r.isActive,
    link: r.link,
    interactionCount: r.interactionCount,
    maxTotalInteractions: orNull(r.maxTotalInteractions),
    maxInteractionsPerWindow: orNull(r.maxInteractionsPerWindow),
    windowSeconds: orNull(r.windowSeconds),
    lastInteractionAt: orNull(r.lastInteractionAt),
    createdAt: r.createdAt,
  };
}

/**
 * A recipient in the full shape (created results). Written out as one literal, not as a
 * spread of the list entry: V8 builds the spread-then-extend object slowly (about 12 µs
 * per recipient, which dominated a 200-item create response).
 */
export function toFullRecipient(r: RecipientMessage) {
  return {
    id: r.id,
    campaignId: r.campaignId,
    externalId: orNull(r.externalId),
    label: orNull(r.label),
    isActive: r.isActive,
    link: r.link,
    interactionCount: r.interactionCount,
    maxTotalInteractions: orNull(r.maxTotalInteractions),
    maxInteractionsPerWindow: orNull(r.maxInteractionsPerWindow),
    windowSeconds: orNull(r.windowSeconds),
    lastInteractionAt: orNull(r.lastInteractionAt),
    createdAt: r.createdAt,
    metadata: { ...r.metadata },
    deviceId: r.deviceId,
    injectionMode: r.injectionMode,
    injectionInstructions: orNull(r.injectionInstructions),
    disabledMessage: orNull(r.disabledMessage),
    cooldownMessage: orNull(r.cooldownMessage),
    distillationStatus: r.distillationStatus,
    distillationLensId: orNull(r.distillationLensId),
    distillationError: orNull(r.distillationError),
  };
}

function parseDetails(json: string | undefined): Record<string, unknown> {
  if (!json) return {};
  try {
    const v = JSON.parse(json);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

/** A create result as it arrives over gRPC, or as the recipient service builds it (no recipient: undefined). */
type CreateResultInput = Omit<CreateResultMessage, 'recipient'> & {
  recipient?: CreateResultMessage['recipient'];
};

/** One per-item result of a create batch, by its status. */
export function toCreateResult(r: CreateResultInput) {
  if (r.status === 'created' && r.recipient) {
    const x = r.recipient;
    // Same literal as toFullRecipient with status and index first (see there for why not a spread).
    return {
      status: 'created' as const,
      index: r.index,
      id: x.id,
      campaignId: x.campaignId,
      externalId: orNull(x.externalId),
      label: orNull(x.label),
      isActive: x.isActive,
      link: x.link,
      interactionCount: x.interactionCount,
      maxTotalInteractions: orNull(x.maxTotalInteractions),
      maxInteractionsPerWindow: orNull(x.maxInteractionsPerWindow),
      windowSeconds: orNull(x.windowSeconds),
      lastInteractionAt: orNull(x.lastInteractionAt),
      createdAt: x.createdAt,
      metadata: { ...x.metadata },
      deviceId: x.deviceId,
      injectionMode: x.injectionMode,
      injectionInstructions: orNull(x.injectionInstructions),
      disabledMessage: orNull(x.disabledMessage),
      cooldownMessage: orNull(x.cooldownMessage),
      distillationStatus: x.distillationStatus,
      distillationLensId: orNull(x.distillationLensId),
      distillationError: orNull(x.distillationError),
    };
  }
  if (r.status === 'duplicate') {
    return { status: 'duplicate' as const, index: r.index, externalId: r.externalId ?? '', id: r.id ?? '' };
  }
  return {
    status: 'error' as const,
    index: r.index,
    ...(r.externalId !== undefined ? { externalId: r.externalId } : {}),
    code: r.code ?? 'invalid_request',
    error: r.error ?? 'The item is invalid.',
    details: parseDetails(r.detailsJson),
  };
}

/** The v1 body of a create batch: its counts and the per-item results in item order. */
export function toCreateResponse(r: {
  created: number;
  failed: number;
  total: number;
  results: CreateResultInput[];
}) {
  return { created: r.created, failed: r.failed, total: r.total, results: r.results.map(toCreateResult) };
}

/** The allowance object; an uncapped campaign reports null included/remaining. */
export function toAllowance(a: AllowanceMessage) {
  return {
    used: a.used,
    included: orNull(a.included),
    remaining: orNull(a.remaining),
    exhausted: a.exhausted,
  };
}

/** A campaign as the API shows it, with the recipient count joined in. */
export function toCampaign(c: CampaignMessage, recipientCount: number) {
  const t = c.timing;
  return {
    id: c.id,
    name: c.name,
    state: c.state,
    budgetMode: c.budgetMode,
    deviceId: c.deviceId,
    startDate: c.startDate,
    endDate: c.endDate,
    recipientCount,
    timing: {
      state: t?.state ?? c.state,
      now: t?.now ?? new Date().toISOString(),
      startsInSeconds: orNull(t?.startsInSeconds),
      runningForSeconds: orNull(t?.runningForSeconds),
      endedAgoSeconds: orNull(t?.endedAgoSeconds),
    },
  };
}

/** A recipient in the full JSON shape. */
export type RecipientJson = ReturnType<typeof toFullRecipient>;

/** One per-item result of a create batch in its JSON shape. */
export type CreateResultJson = ReturnType<typeof toCreateResult>;
