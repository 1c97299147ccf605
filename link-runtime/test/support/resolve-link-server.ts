import { Server, ServerCredentials, type ServerUnaryCall, type sendUnaryData } from '@grpc/grpc-js';
import { loadRecipientsProto, type RecipientMessage } from '@outreach/contracts';
import { AppError, createLogger, unary } from '@outreach/platform';

/**
 * A TEST-ONLY RecipientService that implements just ResolveLink and ResolveLinks over real gRPC,
 * for suites that must not depend on the recipient service being finished. Recipients are set by
 * the test. With `batched` false it answers ResolveLinks UNIMPLEMENTED, like a recipient service
 * from before that method.
 */
export class TestResolveLinkServer {
  readonly recipients = new Map<string, RecipientMessage>();
  /** ResolveLink calls answered. */
  calls = 0;
  /** The tokens of each ResolveLinks call answered. */
  batches: string[][] = [];
  /** When set, ResolveLinks answers one token fewer than it was asked (a broken server). */
  shortAnswers = false;
  private server = new Server();
  port = 0;

  constructor(private readonly batched = true) {}

  async start(): Promise<string> {
    const proto = loadRecipientsProto();
    const logger = createLogger('test-resolve-link', 'silent');
    const notImplemented = (_call: ServerUnaryCall<unknown, unknown>, cb: sendUnaryData<unknown>) =>
      cb({ code: 12, details: 'not implemented in the test server' });
    const handlers: Record<string, unknown> = {};
    for (const name of Object.keys(proto.outreach.v1.RecipientService.service))
      handlers[name] = notImplemented;
    handlers.ResolveLink = unary<{ token: string }, { recipient: RecipientMessage; token: string }>(
      logger,
      'ResolveLink',
      async (req) => {
        this.calls++;
        const recipient = this.recipients.get(req.token);
        if (!recipient) throw new AppError('not_found');
        return { recipient, token: req.token };
      },
    );
    if (this.batched)
      handlers.ResolveLinks = unary<{ tokens: string[] }, unknown>(logger, 'ResolveLinks', async (req) => {
        this.batches.push(req.tokens);
        const results = req.tokens.map((token) => ({ recipient: this.recipients.get(token), token }));
        return { results: this.shortAnswers ? results.slice(1) : results };
      });
    this.server.addService(proto.outreach.v1.RecipientService.service, handlers as never);
    this.port = await new Promise<number>((resolve, reject) =>
      this.server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, port) =>
        err ? reject(err) : resolve(port),
      ),
    );
    return `127.0.0.1:${this.port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.tryShutdown(() => resolve()));
  }
}
