import { type CampaignSnapshot, subjects } from '@outreach/contracts';
import { consumeDurable, decodeJson, type Logger, streamNames } from '@outreach/platform';
import type { JetStreamClient, JetStreamManager } from 'nats';
import type { Pool } from 'pg';
import { applyCampaignSnapshot } from './campaign-replicas';

/**
 * Keeps the campaign replicas current from the state stream. Delivering the last message
 * per subject first means a new or reset consumer rebuilds every campaign's latest facts.
 */
export function consumeCampaignSnapshots(deps: {
  pool: Pool;
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
      durable: `${deps.prefix}-recipients-campaigns`,
      filterSubject: subjects(deps.prefix).campaignStateAll,
      deliver: 'last_per_subject',
    },
    async (msg) => {
      const { data } = decodeJson<CampaignSnapshot>(msg);
      if (!data || typeof data.id !== 'string' || typeof data.version !== 'number') {
        deps.logger.warn({ subject: msg.subject }, 'ignoring malformed campaign snapshot');
        return;
      }
      await applyCampaignSnapshot(deps.pool, data);
    },
    deps.logger,
  );
}
