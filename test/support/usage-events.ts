import { subjects, type UsageStarts, type UsageStartsBatch } from '@outreach/contracts';
import { type JetStreamClient, publishJson } from '@outreach/platform';

/**
 * Announces written batches as a link runtime does: one UsageStarts event whose id is its message
 * id, by default the batch's own id (how a lone batch is announced, or republished alone).
 */
export async function announceStarts(
  js: JetStreamClient,
  natsPrefix: string,
  batches: UsageStartsBatch[],
  eventId = batches[0].batchId,
): Promise<void> {
  const event: UsageStarts = { eventId, batches };
  await publishJson(js, subjects(natsPrefix).usageStarts, event, eventId);
}
