import {
  composeSystemPrompt,
  type KnowledgeEntry,
  type RecipientJson,
  selectKnowledge,
} from '@outreach/contracts';
import { getCampaign } from '../campaigns/campaigns.service';
import type { CampaignDeps } from '../deps';
import { type Device, getDevice } from '../devices/devices.service';
import type { RecipientsForwarder } from './recipients.client';

/** A system prompt as a conversation on the recipient's link would start with it. */
export interface PromptPreview {
  systemPrompt: string;
  knowledge: KnowledgeEntry[];
}

/**
 * Composes the prompt exactly as the link runtime does (same function, same knowledge
 * selection); `sample` stands for the customer's first message, which picks the knowledge.
 */
export function promptFor(
  device: Device,
  recipient: Pick<RecipientJson, 'injectionMode' | 'injectionInstructions'>,
  sample: string,
  knowledgeEntries: number,
): PromptPreview {
  const knowledge = selectKnowledge(device.knowledge, sample, knowledgeEntries);
  const systemPrompt = composeSystemPrompt(
    device,
    { injectionMode: recipient.injectionMode, injectionInstructions: recipient.injectionInstructions },
    knowledge,
  );
  return { systemPrompt, knowledge };
}

/** Loads a recipient of the project with its campaign's device and previews its system prompt. */
export async function previewSystemPrompt(
  deps: CampaignDeps,
  recipients: RecipientsForwarder,
  projectId: string,
  recipientId: string,
  sample = '',
  requestId?: string,
): Promise<PromptPreview & { recipientId: string; deviceId: string; injectionMode: string }> {
  const recipient = await recipients.get(projectId, recipientId, requestId);
  const campaign = await getCampaign(deps, projectId, recipient.campaignId);
  const device = await getDevice(deps, projectId, campaign.deviceId);
  return {
    recipientId: recipient.id,
    deviceId: device.id,
    injectionMode: recipient.injectionMode,
    ...promptFor(device, recipient, sample, deps.knowledgeEntries),
  };
}
