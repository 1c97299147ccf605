import type { DeviceSnapshot } from '@outreach/contracts';
import { type Clock, tagSpan } from '@outreach/platform';
import type { LinkedRecipient, RecipientCache } from '../state/recipient.cache';
import type { StateCache } from '../state/state.cache';
import { checkLink, type OpenLink } from './link-checks';
import type { MissLimit } from './miss-limits';

/** What opening a link reads: the cached recipients and campaign state, and the clock. */
export interface OpenLinkDeps {
  recipients: Pick<RecipientCache, 'peek' | 'resolve'>;
  state: Pick<StateCache, 'campaign' | 'device'>;
  clock: Clock;
  /** Made-up tokens by client address (see unknownLinksLimit). */
  unknownLinks: Pick<MissLimit, 'check' | 'record'>;
}

const TOKEN = /^[A-Za-z0-9_-]{10,128}$/;

/**
 * Resolves a link token and runs the checks that need no counter; throws the refusal. With
 * `seen`, it reports the link's device even when the link is refused, so that a refusal page
 * still speaks the device's language and wears its styling. A token whose recipient is cached
 * is answered at once, not as a promise, so the page view that follows waits for nothing.
 */
export function openLink(
  deps: OpenLinkDeps,
  token: string,
  clientIp: string,
  seen?: { device?: DeviceSnapshot },
): OpenLink | Promise<OpenLink> {
  if (!TOKEN.test(token)) return checkLink(token, null, deps.state, clientIp, deps.clock());
  const cached = deps.recipients.peek(token);
  if (cached !== undefined) return open(deps, token, cached, clientIp, seen);
  return lookUp(deps, token, clientIp).then((recipient) => open(deps, token, recipient, clientIp, seen));
}

/** Resolves a token no cache holds, unless its address has tried too many that exist nowhere. */
async function lookUp(deps: OpenLinkDeps, token: string, clientIp: string): Promise<LinkedRecipient | null> {
  await deps.unknownLinks.check(clientIp);
  const recipient = await deps.recipients.resolve(token);
  if (!recipient) await deps.unknownLinks.record(clientIp);
  return recipient;
}

function open(
  deps: OpenLinkDeps,
  token: string,
  recipient: LinkedRecipient | null,
  clientIp: string,
  seen?: { device?: DeviceSnapshot },
): OpenLink {
  if (recipient) {
    tagSpan({ projectId: recipient.projectId, campaignId: recipient.campaignId, recipientId: recipient.id });
    if (seen) {
      const campaign = deps.state.campaign(recipient.campaignId);
      seen.device = campaign ? deps.state.device(campaign.deviceId) : undefined;
    }
  }
  return checkLink(token, recipient, deps.state, clientIp, deps.clock());
}
