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
