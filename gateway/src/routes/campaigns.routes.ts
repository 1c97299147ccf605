import type Router from '@koa/router';
import type { CampaignMessage } from '@outreach/contracts';
import { toCampaign } from '@outreach/contracts';
import { forwardedOf } from '@outreach/platform';
import type { Backends } from '../clients';
import { projectIsolation } from '../middleware/project-isolation';
import { requireScope } from '../middleware/require-scope';
import { check } from './validate';

export const CAMPAIGNS_PATH = '/api/v1/projects/:projectId/campaigns';

/** GET campaigns: the project's campaigns (optionally one state) with their recipient counts. */
export function campaignRoutes(router: Router, backends: Backends): void {
  router.get(CAMPAIGNS_PATH, projectIsolation, requireScope('recipients:read'), async (ctx) => {
    const query = { ...ctx.query };
    check('campaign-query', query, 'query');
    const projectId = ctx.params.projectId;
    const forwarded = forwardedOf(ctx);
    const { campaigns } = await backends.campaigns<{ campaigns: CampaignMessage[] }>(
      'ListCampaigns',
      { projectId, state: query.state },
      forwarded,
    );
    let counts: Record<string, number> = {};
    if (campaigns.length > 0) {
      ({ counts } = await backends.recipients<{ counts: Record<string, number> }>(
        'CountRecipients',
        { projectId, campaignIds: campaigns.map((c) => c.id) },
        forwarded,
      ));
    }
    ctx.body = { projectId, campaigns: campaigns.map((c) => toCampaign(c, counts[c.id] ?? 0)) };
  });
}
