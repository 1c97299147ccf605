import type { CampaignState } from '@outreach/contracts';
import { AppError } from './errors';

/**
 * The 409 for a recipient write once its campaign is neither draft nor upcoming: the API's and
 * the dashboard's, word for word.
 */
export function recipientsNotEditable(campaignId: string, state: CampaignState): AppError {
  return new AppError('conflict', `The campaign is ${state}; its recipients can no longer be changed.`, {
    details: { reason: 'not_editable', campaignId, state },
    hint: 'Recipients can be created, updated and deleted only while the campaign is draft or upcoming.',
  });
}

/**
 * The 404 for a campaign that is not in the project, whether it is another project's or none:
 * every service's, word for word, so that no answer tells the two apart.
 */
export function campaignNotFound(campaignId: string): AppError {
  return new AppError('not_found', 'Campaign not found in this project.', {
    details: { resource: 'campaign', id: campaignId },
  });
}
