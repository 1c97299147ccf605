import { composeSystemPrompt, selectKnowledge } from '@outreach/contracts';
import { AppError } from '@outreach/platform';
import type { OpenLink } from '../admission/link-checks';
import type { ChatMessage } from '../assistant/assistant.client';

/** Limits of customer messages. */
export interface MessageLimits {
  maxChars: number;
  historyMessages: number;
  knowledgeEntries: number;
}

/** Validates a message body: `{ text }`, a non-empty string of at most `maxChars` characters. */
export function readMessageText(body: unknown, maxChars: number): string {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AppError('invalid_request', 'The body must be a JSON object with a "text" field.', {
      details: { pointer: '', rule: 'type' },
    });
  }
  const extra = Object.keys(body).filter((k) => k !== 'text');
  if (extra.length > 0) {
    throw new AppError('invalid_request', `Unknown field "${extra[0]}".`, {
      details: { pointer: `/${extra[0]}`, rule: 'additionalProperties' },
    });
  }
  const text = (body as { text?: unknown }).text;
  if (typeof text !== 'string' || text.trim() === '') {
    throw new AppError('invalid_request', 'The message text must be a non-empty string.', {
      details: { pointer: '/text', rule: typeof text === 'string' ? 'minLength' : 'type' },
    });
  }
  const length = [...text].length;
  if (length > maxChars) {
    throw new AppError('invalid_request', `The message is longer than ${maxChars} characters.`, {
      details: { pointer: '/text', rule: 'maxLength', reason: 'too_long', limit: maxChars, length },
    });
  }
  return text;
}

/**
 * The messages sent to the model for one turn: the system prompt (built from the device, the
 * recipient and the knowledge retrieved for the customer's text so far), then the history, then
 * the new message. The customer's text only selects knowledge; it never enters the system prompt.
 */
export function buildModelMessages(
  link: OpenLink,
  history: readonly ChatMessage[],
  text: string,
  limits: MessageLimits,
): ChatMessage[] {
  const customerText = [...history.filter((m) => m.role === 'user').map((m) => m.content), text].join('\n');
  const knowledge = selectKnowledge(link.device.knowledge, customerText, limits.knowledgeEntries);
  const system = composeSystemPrompt(
    link.device,
    {
      injectionMode: link.recipient.injectionMode,
      injectionInstructions: link.recipient.injectionInstructions ?? null,
    },
    knowledge,
  );
  return [{ role: 'system', content: system }, ...history, { role: 'user', content: text }];
}
