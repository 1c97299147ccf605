import { Gauge, type Registry } from 'prom-client';
import type { CampaignDeps } from '../deps';
import { remainingBudgets } from './campaigns.service';

/**
 * Registers `campaign_budget_remaining{campaign_id}`, computed from PostgreSQL when scraped.
 * Campaigns that complete or lose their cap drop out of the next scrape.
 */
export function registerBudgetMetrics(registry: Registry, deps: Pick<CampaignDeps, 'pool' | 'clock'>): void {
  new Gauge({
    name: 'campaign_budget_remaining',
    help: 'Conversations a launched, metered, topped-off campaign may still admit',
    labelNames: ['campaign_id'],
    registers: [registry],
    async collect() {
      // A scrape while PostgreSQL is down leaves the gauge out rather than failing the scrape.
      const budgets = await remainingBudgets(deps).catch(() => []);
      this.reset();
      for (const b of budgets) this.set({ campaign_id: b.campaignId }, b.remaining);
    },
  });
}
