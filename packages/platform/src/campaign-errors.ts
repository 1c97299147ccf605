import { AppError } from './errors';

/**
 * The 404 for a campaign that is not in the project, whether it is another project's or none:
 * every service's, word for word, so that no answer tells the two apart.
 */
export function campaignNotFound(campaignId: string): AppError {
  return new AppError('not_found', 'Campaign not found in this project.', {
    details: { resource: 'campaign', id: campaignId },
  });
}
