import {
  type CampaignFacts,
  type CampaignSnapshot,
  type DeviceSnapshot,
  deriveCampaignState,
  withoutBidiControls,
} from '@outreach/contracts';
import { AppError } from '@outreach/platform';
import type { LinkedRecipient } from '../state/recipient.cache';
import { ipAllowed } from './client-ip';

/** Everything a link's page and conversations are built from. */
export interface OpenLink {
  token: string;
  recipient: LinkedRecipient;
  campaign: CampaignSnapshot;
  device: DeviceSnapshot;
}

/**
 * The checks of a link that need no counter, in the product's order: the token is known, the
 * campaign is active, the device is active and admits the client address, the link is enabled.
 * They hold for a page view, a conversation start and every message alike.
 */
export function checkLink(
  token: string,
  recipient: LinkedRecipient | null,
  lookup: {
    campaign(id: string): CampaignSnapshot | undefined;
    device(id: string): DeviceSnapshot | undefined;
  },
  clientIp: string,
  now: Date,
): OpenLink {
  const campaign = recipient && lookup.campaign(recipient.campaignId);
  // A deleted campaign's links go with its recipients; the tombstone may arrive first.
  if (!recipient || campaign?.deletedAt) throw new AppError('not_found', 'This link does not exist.');
  const state = campaign && deriveCampaignState(instantsOf(campaign), now);
  if (!campaign || state !== 'active') {
    // A completed campaign (ended or halted) never opens again; one not yet live may.
    const over = state === 'completed';
    throw new AppError('unavailable', 'This conversation is currently unavailable.', {
      details: { reason: 'campaign_not_active' },
      retryable: !over,
      hint: over ? 'This link will not open again; retrying will not help.' : undefined,
    });
  }
  const device = lookup.device(campaign.deviceId);
  if (!device?.isActive) {
    throw new AppError('unavailable', 'This conversation is currently unavailable.', {
      details: { reason: 'device_inactive' },
    });
  }
  if (!ipAllowed(clientIp, device.ipAllowList)) {
    throw new AppError('forbidden', 'This conversation is not available from your network.', {
      details: { reason: 'ip_not_allowed' },
      hint: 'Open the link from a network the sender allows.',
    });
  }
  if (!recipient.isActive) throw linkDisabled(recipient);
  return { token, recipient, campaign, device };
}

// Snapshots are replaced whole, never changed, so each one's instants are parsed once, not per view.
const instants = new WeakMap<CampaignSnapshot, CampaignFacts>();

function instantsOf(campaign: CampaignSnapshot): CampaignFacts {
  let facts = instants.get(campaign);
  if (!facts) {
    const at = (d: string | null) => (d === null ? null : new Date(d));
    facts = {
      startDate: new Date(campaign.startDate),
      endDate: new Date(campaign.endDate),
      launchedAt: at(campaign.launchedAt),
      haltedAt: at(campaign.haltedAt),
    };
    instants.set(campaign, facts);
  }
  return facts;
}

/** The counters a link's starts are held to: the rolling window, lifetime cap and budget (-1: none). */
export interface CounterLimits {
  /** 0 when there is no window. */
  windowMs: number;
  perWindow: number;
  maxTotal: number;
  budget: number;
}

/** The link's counter limits, as the admission script takes them. */
export function counterLimits({ recipient, campaign }: OpenLink): CounterLimits {
  const windowed = recipient.maxInteractionsPerWindow !== undefined && recipient.windowSeconds !== undefined;
  const capped = campaign.budgetMode === 'metered' && campaign.includedConversations !== null;
  return {
    windowMs: windowed ? recipient.windowSeconds! * 1000 : 0,
    perWindow: windowed ? recipient.maxInteractionsPerWindow! : -1,
    maxTotal: recipient.maxTotalInteractions ?? -1,
    budget: capped ? campaign.includedConversations! : -1,
  };
}

/** True when a lifetime cap, a rolling window or a metered budget could refuse the link's next start. */
export function countersApply(link: OpenLink): boolean {
  const limits = counterLimits(link);
  return limits.perWindow >= 0 || limits.maxTotal >= 0 || limits.budget >= 0;
}

/**
 * The operator's message as the page shows it: one stored before bidi controls were refused has
 * them taken out, so that it cannot reorder what the customer reads.
 */
function shownMessage(message: string | null | undefined): string | null {
  return typeof message === 'string' ? withoutBidiControls(message) : null;
}

/** The refusal of a disabled link (or one at its lifetime cap), carrying the operator's message. */
export function linkDisabled(recipient: LinkedRecipient): AppError {
  return new AppError('link_disabled', undefined, {
    details: { message: shownMessage(recipient.disabledMessage) },
  });
}

/** The refusal of a link at its rolling-window cap, with the wait in whole seconds. */
export function cooldown(recipient: LinkedRecipient, retryAfterMs: number): AppError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new AppError('cooldown', undefined, {
    details: { message: shownMessage(recipient.cooldownMessage), retryAfterSeconds: seconds },
    headers: { 'Retry-After': String(seconds) },
  });
}

/** The refusal of a new conversation once the campaign's metered budget is used up. */
export function budgetExhausted(): AppError {
  return new AppError('budget_exhausted', undefined, { details: { reason: 'budget_exhausted' } });
}

/** The failure of a start whose counters stayed missing through three rebuilds (Redis losing data over and over). */
export function countersUnavailable(): AppError {
  return new AppError('unavailable', undefined, {
    details: { reason: 'counters_unavailable' },
    cause: new Error('usage counters still missing after three rebuilds'),
  });
}
