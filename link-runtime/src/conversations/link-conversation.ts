import type { MissLimit } from '../admission/miss-limits';
import type { ConversationInfo, ConversationStore } from './conversations.store';

/** What finding a link's conversation needs. */
export interface LinkConversationDeps {
  conversations: Pick<ConversationStore, 'get'>;
  /** Made-up conversation ids by link: only the durable lookup of an id Redis lacks is limited. */
  unknownConversations: Pick<MissLimit, 'check' | 'record'>;
}

/**
 * The live conversation `id` of the link's recipient, or null when it is another's, unknown or
 * expired: a miss counts against the link's made-up conversation ids.
 */
export async function conversationOfLink(
  deps: LinkConversationDeps,
  recipientId: string,
  id: string,
): Promise<ConversationInfo | null> {
  const conversation = await deps.conversations.get(id, () => deps.unknownConversations.check(recipientId));
  if (conversation && conversation.recipientId === recipientId) return conversation;
  await deps.unknownConversations.record(recipientId);
  return null;
}
