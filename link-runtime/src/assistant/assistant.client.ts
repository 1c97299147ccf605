import { AppError } from '@outreach/platform';

/** One message of a chat, in the OpenAI wire shape. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** Something that answers a chat: in one piece, or token by token. */
export interface Assistant {
  readonly configured: boolean;
  complete(messages: ChatMessage[]): Promise<string>;
  stream(messages: ChatMessage[]): AsyncIterable<string>;
}

/** Where the OpenAI-compatible endpoint is and how long to wait for it. */
export interface AssistantOptions {
  baseUrl?: string;
  apiKey?: string;
  model: string;
  timeoutMs: number;
}

/** The assistant for the configuration: an OpenAI-compatible client, or the offline one. */
export function createAssistant(options: AssistantOptions): Assistant {
  return options.baseUrl
    ? new OpenAiCompatibleAssistant({ ...options, baseUrl: options.baseUrl })
    : new OfflineAssistant();
}

/**
 * Answers without a model, deterministically, and says so plainly, so that a deployment without
 * a model still works end to end and nobody mistakes its answers for a model's.
 */
export class OfflineAssistant implements Assistant {
  readonly configured = false;

  async complete(messages: ChatMessage[]): Promise<string> {
    const last = [...messages].reverse().find((m) => m.role === 'user');
    const echo = last ? ` You wrote: "${last.content.slice(0, 200)}"` : '';
    return `No language model is configured for this assistant yet, so this is an automatic reply.${echo}`;
  }

  async *stream(messages: ChatMessage[]): AsyncIterable<string> {
    const text = await this.complete(messages);
    for (const part of text.split(/(?<= )/)) yield part;
  }
}

/** The model failed us: always a failure (with a cause), so it is logged, never a mere refusal. */
function unavailable(reason: string, cause: unknown = new Error(reason)): AppError {
  return new AppError('unavailable', 'The assistant is not answering right now.', {
    details: { reason },
    hint: 'Send the message again in a moment.',
    cause,
  });
}

/** A client of `POST {baseUrl}/chat/completions` (OpenAI and compatible local servers). */
export class OpenAiCompatibleAssistant implements Assistant {
  readonly configured = true;

  constructor(private readonly options: AssistantOptions & { baseUrl: string }) {}

  async complete(messages: ChatMessage[]): Promise<string> {
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    const res = await this.post(messages, false, signal);
    let body: { choices?: { message?: { content?: string } }[] };
    try {
      body = (await res.json()) as typeof body;
    } catch (err) {
      throw unavailable(signal.aborted ? 'assistant_timeout' : 'assistant_bad_response', err);
    }
    const content = body.choices?.[0]?.message?.content;
    if (typeof content !== 'string') throw unavailable('assistant_bad_response');
    return content;
  }

  async *stream(messages: ChatMessage[]): AsyncIterable<string> {
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    const res = await this.post(messages, true, signal);
    if (!res.body) throw unavailable('assistant_bad_response');
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let newline = buffer.indexOf('\n');
        while (newline >= 0) {
          const line = buffer.slice(0, newline).trim();
          buffer = buffer.slice(newline + 1);
          newline = buffer.indexOf('\n');
          if (!line.startsWith('data:')) continue;
          const data = line.slice(5).trim();
          if (data === '[DONE]') return;
          let parsed: { choices?: { delta?: { content?: string } }[] };
          try {
            parsed = JSON.parse(data);
          } catch (err) {
            throw unavailable('assistant_bad_response', err);
          }
          const token = parsed.choices?.[0]?.delta?.content;
          if (token) yield token;
        }
      }
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw unavailable(signal.aborted ? 'assistant_timeout' : 'assistant_unreachable', err);
    }
  }

  private async post(messages: ChatMessage[], stream: boolean, signal: AbortSignal): Promise<Response> {
    const url = `${this.options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (stream) headers.accept = 'text/event-stream';
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: this.options.model, messages, stream }),
        signal,
      });
    } catch (err) {
      throw unavailable(signal.aborted ? 'assistant_timeout' : 'assistant_unreachable', err);
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw unavailable(`assistant_http_${res.status}`);
    }
    return res;
  }
}
