import { type CampaignSnapshot, subjects } from '@outreach/contracts';
import { consumeDurable, decodeJson, type Logger, streamNames } from '@outreach/platform';
import type { JetStreamClient, JetStreamManager } from 'nats';

/** The durable consumer of campaign snapshots, shared by every instance. */
export const campaignsDurable = (prefix: string): string => `${prefix}-recipients-campaigns`;

/**
 * Keeps the campaign replicas current from the state stream. Delivering the last message
 * per subject first means a new or reset consumer rebuilds every campaign's latest facts.
 */
export function consumeCampaignSnapshots(deps: {
  apply: (snapshot: CampaignSnapshot) => Promise<void>;
  js: JetStreamClient;
  jsm: JetStreamManager;
  prefix: string;
  logger: Logger;
}): Promise<() => Promise<void>> {
  return consumeDurable(
    deps.js,
    deps.jsm,
    {
      stream: streamNames(deps.prefix).state,
      durable: campaignsDurable(deps.prefix),
      filterSubject: subjects(deps.prefix).campaignStateAll,
      deliver: 'last_per_subject',
    },
    async (msg) => {
      const { data } = decodeJson<CampaignSnapshot>(msg);
      // A malformed snapshot would fail forever on redelivery; it is logged and dropped instead.
      if (!isUsableSnapshot(data)) {
        deps.logger.warn({ subject: msg.subject }, 'ignoring malformed campaign snapshot');
        return;
      }
      await deps.apply(data);
    },
    deps.logger,
  );
}

/** True when a snapshot carries every fact the replica needs, in the right types. */
export function isUsableSnapshot(s: CampaignSnapshot | null | undefined): s is CampaignSnapshot {
  const instant = (v: unknown) => typeof v === 'string' && !Number.isNaN(Date.parse(v));
  return (
    !!s &&
    typeof s.id === 'string' &&
    typeof s.projectId === 'string' &&
    typeof s.deviceId === 'string' &&
    Number.isSafeInteger(s.version) &&
    instant(s.startDate) &&
    instant(s.endDate) &&
    (s.launchedAt === null || instant(s.launchedAt)) &&
    (s.haltedAt === null || instant(s.haltedAt)) &&
    (s.recipientCap === null || (Number.isInteger(s.recipientCap) && s.recipientCap >= 0)) &&
    (s.deletedAt === undefined || s.deletedAt === null || instant(s.deletedAt))
  );
}
