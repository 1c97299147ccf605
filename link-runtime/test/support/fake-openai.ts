import { createServer, type IncomingMessage, type Server } from 'node:http';

/** One request the test model received. */
export interface ModelRequest {
  authorization: string | undefined;
  body: { model: string; stream?: boolean; messages: { role: string; content: string }[] };
}

/**
 * A TEST-ONLY OpenAI-compatible server speaking the real wire protocol: `POST /v1/chat/completions`
 * answers JSON, or `text/event-stream` chunks ending in `data: [DONE]` when `stream` is true.
 * It records every request so a test can see exactly what reached the model.
 */
export class FakeOpenAi {
  readonly requests: ModelRequest[] = [];
  reply = 'Hello from the model.';
  delayMs = 0;
  /** When set, every answer waits for it: a reply held until the test lets it go. */
  gate: Promise<unknown> | null = null;
  /** When set, every stream waits for it after its first token: a reply held midway. */
  midGate: Promise<unknown> | null = null;
  /** How many of the next requests fail with a 500 and an OpenAI error body. */
  failures = 0;
  /**
   * How a stream ends: whole (`finish_reason`, then `[DONE]`), `cut` (the connection closes after
   * half the reply, as a crashing server's does) or `error` (an error chunk after half the reply,
   * as vLLM and llama.cpp report a failure mid-stream).
   */
  streamEnd: 'whole' | 'cut' | 'error' = 'whole';
  /** Pause before each streamed token. */
  tokenDelayMs = 0;
  /** Streams whose client closed the connection before the stream's end. */
  abandoned = 0;
  /** When set, a request without streaming is answered 200 with this body instead of a completion. */
  rawBody: string | null = null;
  private server: Server | undefined;

  /**
   * Holds every answer until the returned function is called (it may be called more than once):
   * before its first byte, or with `midway` a stream after its first token. Call it in a
   * `finally`: a hold left in place would keep every later test's replies.
   */
  hold(where: 'before' | 'midway' = 'before'): () => void {
    const field = where === 'before' ? 'gate' : 'midGate';
    let release = () => {};
    this[field] = new Promise<void>((resolve) => {
      release = resolve;
    });
    return () => {
      this[field] = null;
      release();
    };
  }

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/v1`;
  }

  private async handle(req: IncomingMessage, res: import('node:http').ServerResponse): Promise<void> {
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ModelRequest['body'];
    this.requests.push({ authorization: req.headers.authorization, body });
    if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs).unref());
    if (this.gate) await this.gate;
    if (res.destroyed) return;
    if (this.failures > 0) {
      this.failures--;
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'The server had an error.', type: 'server_error' } }));
      return;
    }
    if (!body.stream && this.rawBody !== null) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(this.rawBody);
      return;
    }
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-test',
          object: 'chat.completion',
          model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content: this.reply }, finish_reason: 'stop' }],
        }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.on('close', () => {
      if (!res.writableFinished) this.abandoned++;
    });
    const parts = this.reply.split(/(?<= )/);
    const upTo = this.streamEnd === 'whole' ? parts.length : Math.ceil(parts.length / 2);
    res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { role: 'assistant' } }] })}\n\n`);
    for (const part of parts.slice(0, upTo)) {
      if (this.tokenDelayMs > 0) await new Promise((r) => setTimeout(r, this.tokenDelayMs).unref());
      if (res.destroyed) return;
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: part } }] })}\n\n`);
      if (this.midGate) await this.midGate;
    }
    if (this.streamEnd === 'cut') {
      res.end();
      return;
    }
    if (this.streamEnd === 'error') {
      res.end(
        `data: ${JSON.stringify({ error: { message: 'The model crashed.', type: 'server_error' } })}\n\n`,
      );
      return;
    }
    res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
    res.end('data: [DONE]\n\n');
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}
