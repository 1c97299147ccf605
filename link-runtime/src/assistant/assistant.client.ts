import { AppError, parserMessage } from '@outreach/platform';

/** One message of a chat, in the OpenAI wire shape. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/**
 * Something that answers a chat: in one piece, or token by token. A reply is whole or an error,
 * never empty; `cancel` stops it (the customer went away), the model's request included.
 */
export interface Assistant {
  readonly configured: boolean;
  complete(messages: ChatMessage[], cancel?: AbortSignal): Promise<string>;
  stream(messages: ChatMessage[], cancel?: AbortSignal): AsyncIterable<string>;
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

  async complete(messages: ChatMessage[], _cancel?: AbortSignal): Promise<string> {
    const last = [...messages].reverse().find((m) => m.role === 'user');
    const echo = last ? ` You wrote: "${last.content.slice(0, 200)}"` : '';
    return `No language model is configured for this assistant yet, so this is an automatic reply.${echo}`;
  }

  async *stream(messages: ChatMessage[], _cancel?: AbortSignal): AsyncIterable<string> {
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

/**
 * Why a call to the model broke off: its deadline, the customer leaving, or else `otherwise`
 * (the network, or a body that is no answer).
 */
function failureReason(
  timeout: AbortSignal,
  cancel: AbortSignal | undefined,
  otherwise = 'assistant_unreachable',
): string {
  if (cancel?.aborted) return 'client_gone';
  return timeout.aborted ? 'assistant_timeout' : otherwise;
}

/**
 * A parse error of the model's answer without the answer: V8 quotes the text it could not parse,
 * which may be the customer's words or the instructions echoed back, and the cause is logged.
 */
function withoutText(err: unknown): unknown {
  // By name, not instanceof: the parser that threw may belong to another realm (fetch's body reader).
  const parseError = err as Error | null;
  return parseError?.name === 'SyntaxError' && typeof parseError.message === 'string'
    ? new SyntaxError(parserMessage(parseError))
    : err;
}

/** A client of `POST {baseUrl}/chat/completions` (OpenAI and compatible local servers). */
export class OpenAiCompatibleAssistant implements Assistant {
  readonly configured = true;

  constructor(private readonly options: AssistantOptions & { baseUrl: string }) {}

  async complete(messages: ChatMessage[], cancel?: AbortSignal): Promise<string> {
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    const res = await this.post(messages, false, timeout, cancel);
    let body: { choices?: { message?: { content?: string } }[] };
    try {
      body = (await res.json()) as typeof body;
    } catch (err) {
      throw unavailable(failureReason(timeout, cancel, 'assistant_bad_response'), withoutText(err));
    }
    const content = body.choices?.[0]?.message?.content;
    if (typeof content !== 'string' || content === '') throw unavailable('assistant_bad_response');
    return content;
  }

  async *stream(messages: ChatMessage[], cancel?: AbortSignal): AsyncIterable<string> {
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    const res = await this.post(messages, true, timeout, cancel);
    if (!res.body) throw unavailable('assistant_bad_response');
    const decoder = new TextDecoder();
    let buffer = '';
    let said = false;
    let finished = false;
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
          if (data === '[DONE]') {
            if (!said) throw unavailable('assistant_bad_response');
            return;
          }
          let parsed: {
            choices?: { delta?: { content?: string }; finish_reason?: string | null }[];
            error?: unknown;
          };
          try {
            parsed = JSON.parse(data);
          } catch (err) {
            throw unavailable('assistant_bad_response', withoutText(err));
          }
          // Compatible servers report a failure mid-stream as a chunk of its own.
          if (parsed.error !== undefined) throw unavailable('assistant_bad_response');
          const choice = parsed.choices?.[0];
          if (choice?.finish_reason) finished = true;
          const token = choice?.delta?.content;
          if (token) {
            said = true;
            yield token;
          }
        }
      }
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw unavailable(failureReason(timeout, cancel), err);
    }
    // A server that closes after its finish_reason without `[DONE]` has said everything; one that
    // closes before it has not, and what arrived is not the whole reply.
    if (!finished || !said) throw unavailable('assistant_bad_response');
  }

  private async post(
    messages: ChatMessage[],
    stream: boolean,
    timeout: AbortSignal,
    cancel: AbortSignal | undefined,
  ): Promise<Response> {
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
        signal: cancel ? AbortSignal.any([timeout, cancel]) : timeout,
      });
    } catch (err) {
      throw unavailable(failureReason(timeout, cancel), err);
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw unavailable(`assistant_http_${res.status}`);
    }
    return res;
  }
}
