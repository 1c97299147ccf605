import type { RequestListener } from 'node:http';
import { PassThrough } from 'node:stream';
import Router from '@koa/router';
import { prepareKnowledge } from '@outreach/contracts';
import {
  type AccessLogMode,
  AppError,
  type Clock,
  type DependencyStates,
  healthRoutes,
  type Lifecycle,
  logAppErrors,
  readJsonBody,
  requestContext,
  requestError,
  routeLabel,
  routeNotFound,
  toAppError,
} from '@outreach/platform';
import Koa, { type Context } from 'koa';
import type { Logger } from 'pino';
import type { Admission } from './admission/admission.service';
import { requestAddress } from './admission/client-ip';
import type { OpenLink } from './admission/link-checks';
import type { MissLimit } from './admission/miss-limits';
import { openLink } from './admission/open-link';
import { createStartHandler } from './admission/start-handler';
import type { Assistant, ChatMessage } from './assistant/assistant.client';
import type { ConversationStore } from './conversations/conversations.store';
import { buildModelMessages, type MessageLimits, readMessageText } from './conversations/messages.service';
import { LINK_HEADERS } from './http/direct';
import { countRefusal, type LinkMetrics } from './metrics';
import { createPageHandler } from './page/page-handler';
import type { RecipientCache } from './state/recipient.cache';
import type { StateCache } from './state/state.cache';

/** Everything the link app is built from; nothing here listens or connects. */
export interface LinkAppDeps {
  logger: Logger;
  /** Which requests get an access line (ACCESS_LOG), on every route. */
  accessLog?: AccessLogMode;
  clock: Clock;
  lifecycle: Lifecycle;
  /** What /readyz reports on (see healthRoutes). */
  dependencies: DependencyStates;
  state: StateCache;
  recipients: RecipientCache;
  unknownLinks: MissLimit;
  /** Made-up conversation ids by link (see unknownConversationsLimit). */
  unknownConversations: MissLimit;
  admission: Admission;
  conversations: ConversationStore;
  assistant: Assistant;
  metrics: LinkMetrics;
  trustProxy: boolean;
  trustedHops: number;
  /** The origin of `PUBLIC_BASE_URL`: a start from a page of another is refused (see crossSiteRefusal). */
  publicOrigin: string;
  messagesPerMinute: number;
  limits: MessageLimits;
  /** The longest a reply may take (ASSISTANT_TIMEOUT_MS): the chat page gives one up after it. */
  replyMs: number;
}

/**
 * The link runtime's request handler: its two hot paths, the page and the conversation start,
 * on their own; messages and health through the app.
 */
export function linkRequestListener(deps: LinkAppDeps): RequestListener {
  const page = createPageHandler(deps);
  const start = createStartHandler(deps);
  const app = buildLinkApp(deps).callback();
  return (req, res) => {
    if (!page(req, res) && !start(req, res)) void app(req, res);
  };
}

/**
 * Builds the Koa app of the message endpoint and health routes (the page and the start are
 * createPageHandler's and createStartHandler's).
 */
export function buildLinkApp(deps: LinkAppDeps): Koa {
  const app = new Koa({ proxy: deps.trustProxy, maxIpsCount: deps.trustedHops });
  logAppErrors(app, deps.logger);
  app.use(requestContext(deps.logger, { accessLog: deps.accessLog }));
  app.use(async (ctx, next) => {
    const started = performance.now();
    let status: number | undefined;
    try {
      await next();
    } catch (err) {
      // requestContext (outside) writes the refusal; count the status it will send.
      status = toAppError(err).spec.httpStatus;
      throw err;
    } finally {
      // Route templates only (never the token itself) keep the label set small and the links secret.
      const route = routeLabel(ctx);
      const seconds = (performance.now() - started) / 1000;
      deps.metrics.http.record([ctx.method, route], String(status ?? ctx.status), seconds);
    }
  });
  // Ready once the campaign and device state is replayed: before, links would be refused as not running.
  app.use(healthRoutes(deps.lifecycle, deps.dependencies, () => deps.state.replayed));
  app.use(async (ctx, next) => {
    ctx.set(LINK_HEADERS);
    await next();
  });

  /** The link checks that need no counter; throws the refusal. */
  const open = async (ctx: Context): Promise<OpenLink> =>
    openLink(deps, ctx.params.token as string, requestAddress(ctx.req, deps));

  const refused = (ctx: Context, err: unknown): AppError => {
    const appError = requestError(ctx, err);
    countRefusal(deps.metrics, appError);
    return appError;
  };

  const router = new Router();

  router.post('/i/:token/conversations/:conversationId/messages', async (ctx) => {
    // A customer who leaves before the reply is whole (a phone losing its signal) sends the
    // message again: the model's request stops, and an exchange they never saw is not kept to be
    // answered twice. Watched from the start, as the checks and the history come first.
    const gone = new AbortController();
    ctx.res.once('close', () => gone.abort());
    let link: OpenLink;
    let messages: ChatMessage[];
    let text: string;
    const conversationId = ctx.params.conversationId as string;
    try {
      // The link's checks come first, as for a start: a halted link's message is refused as such
      // whatever its body.
      link = await open(ctx);
      const body = await readJsonBody(ctx, { limitBytes: 64 * 1024 });
      // A conversation Redis holds is answered at once; only the database lookup is limited.
      const recipientId = link.recipient.id;
      const conversation = await deps.conversations.get(conversationId, () =>
        deps.unknownConversations.check(recipientId),
      );
      if (!conversation || conversation.recipientId !== recipientId) {
        await deps.unknownConversations.record(recipientId);
        throw new AppError('not_found', 'This conversation does not exist or has expired.', {
          hint: 'Reload the link to start a new conversation.',
          details: { reason: 'conversation_not_found' },
        });
      }
      text = readMessageText(body, deps.limits.maxChars);
      const wait = await deps.conversations.takeMessageSlot(
        conversationId,
        deps.messagesPerMinute,
        deps.clock().getTime(),
      );
      if (wait > 0) {
        throw new AppError('rate_limited', 'Too many messages in this conversation.', {
          details: { limitPerMinute: deps.messagesPerMinute, retryAfterSeconds: wait },
          headers: { 'Retry-After': String(wait) },
        });
      }
      const history = await deps.conversations.history(conversationId, deps.limits.historyMessages);
      // Knowledge not indexed yet (its page was opened on another pod) is indexed in slices,
      // the other conversations of the process going on meanwhile.
      await prepareKnowledge(link.device.knowledge);
      messages = buildModelMessages(link, history, text, deps.limits);
    } catch (err) {
      throw refused(ctx, err);
    }
    const remember = (reply: string) =>
      deps.conversations.append(
        conversationId,
        [
          { role: 'user', content: text },
          { role: 'assistant', content: reply },
        ],
        deps.limits.historyMessages,
      );

    if (!wantsStream(ctx)) {
      const reply = await deps.assistant.complete(messages, gone.signal).catch((err) => {
        if (gone.signal.aborted) return null;
        throw refused(ctx, err);
      });
      // Nobody is listening any more: no answer to send, no refusal to count.
      if (reply === null || gone.signal.aborted) {
        ctx.status = 204;
        return;
      }
      await remember(reply);
      ctx.body = { reply };
      return;
    }
    const stream = new PassThrough();
    ctx.status = 200;
    ctx.type = 'text/event-stream; charset=utf-8';
    ctx.set('X-Accel-Buffering', 'no');
    ctx.body = stream;
    const send = (event: string | null, data: unknown) =>
      stream.write(`${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
    void (async () => {
      let reply = '';
      try {
        for await (const token of deps.assistant.stream(messages, gone.signal)) {
          reply += token;
          send(null, { token });
        }
        if (gone.signal.aborted) return;
        await remember(reply);
        send('done', { reply });
      } catch (err) {
        if (gone.signal.aborted) return;
        const appError = requestError(ctx, err);
        ctx.state.log.warn({ err, code: appError.code }, 'assistant stream failed');
        send('error', appError.toBody());
      } finally {
        stream.end();
      }
    })();
  });

  app.use(router.routes());
  app.use(routeNotFound);
  return app;
}

function wantsStream(ctx: Context): boolean {
  return (ctx.get('accept') || '').includes('text/event-stream');
}
