import { PassThrough } from 'node:stream';
import Router from '@koa/router';
import type { DeviceSnapshot } from '@outreach/contracts';
import {
  AppError,
  type Clock,
  healthRoutes,
  type Lifecycle,
  type ReadinessCheck,
  readJsonBody,
  requestContext,
  sendError,
  tagSpan,
  toAppError,
} from '@outreach/platform';
import Koa, { type Context } from 'koa';
import type { Logger } from 'pino';
import type { Admission } from './admission/admission.service';
import { clientAddress } from './admission/client-ip';
import { checkLink, type OpenLink } from './admission/link-checks';
import type { Assistant, ChatMessage } from './assistant/assistant.client';
import type { ConversationStore } from './conversations/conversations.store';
import { buildModelMessages, type MessageLimits, readMessageText } from './conversations/messages.service';
import type { LinkMetrics } from './metrics';
import { ChatPages } from './page/chat-pages';
import { pickLanguage } from './page/i18n';
import { type PageBody, renderPage } from './page/render';
import type { RecipientCache } from './state/recipient.cache';
import type { StateCache } from './state/state.cache';

/** Everything the link app is built from; nothing here listens or connects. */
export interface LinkAppDeps {
  logger: Logger;
  clock: Clock;
  lifecycle: Lifecycle;
  readiness: Record<string, ReadinessCheck>;
  state: StateCache;
  recipients: RecipientCache;
  admission: Admission;
  conversations: ConversationStore;
  assistant: Assistant;
  metrics: LinkMetrics;
  trustProxy: boolean;
  messagesPerMinute: number;
  limits: MessageLimits;
}

const TOKEN = /^[A-Za-z0-9_-]{10,128}$/;

/** Builds the Koa app of the link pages and their conversation endpoints. */
export function buildLinkApp(deps: LinkAppDeps): Koa {
  const app = new Koa({ proxy: deps.trustProxy });
  app.use(requestContext(deps.logger));
  app.use(async (ctx, next) => {
    const stop = deps.metrics.httpDuration.startTimer({ method: ctx.method });
    let status: number | undefined;
    try {
      await next();
    } catch (err) {
      // requestContext (outside) writes the refusal; count the status it will send.
      status = toAppError(err).spec.httpStatus;
      throw err;
    } finally {
      // Route templates only (never the token itself) keep the label set small and the links secret.
      const route = (ctx as Context & { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      stop({ route });
      deps.metrics.httpRequests.inc({ method: ctx.method, route, status: String(status ?? ctx.status) });
    }
  });
  app.use(healthRoutes(deps.lifecycle, deps.readiness));
  app.use(async (ctx, next) => {
    // Links are capabilities: keep them out of referrers, caches and indexes.
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Cache-Control', 'no-store');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('X-Robots-Tag', 'noindex, nofollow');
    await next();
  });

  const ipOf = (ctx: Context) =>
    clientAddress(ctx.req.socket.remoteAddress, ctx.get('x-forwarded-for'), deps.trustProxy);

  /** The link checks that need no counter; throws the refusal. */
  const open = async (ctx: Context, seen?: { device?: DeviceSnapshot }): Promise<OpenLink> => {
    const token = ctx.params.token as string;
    const recipient = TOKEN.test(token) ? await deps.recipients.resolve(token) : null;
    if (recipient)
      tagSpan({
        projectId: recipient.projectId,
        campaignId: recipient.campaignId,
        recipientId: recipient.id,
      });
    if (recipient && seen) {
      // The page of a refusal still speaks the device's language and wears its styling.
      const campaign = deps.state.campaign(recipient.campaignId);
      seen.device = campaign ? deps.state.device(campaign.deviceId) : undefined;
    }
    return checkLink(token, recipient, deps.state, ipOf(ctx), deps.clock());
  };

  const refused = (err: unknown): AppError => {
    const appError = toAppError(err);
    deps.metrics.refusals.inc({ code: appError.code });
    return appError;
  };

  const router = new Router();

  const chatPages = new ChatPages();

  router.get('/i/:token', async (ctx) => {
    const seen: { device?: DeviceSnapshot } = {};
    ctx.type = 'text/html; charset=utf-8';
    try {
      const link = await open(ctx, seen);
      await deps.admission.check(link);
    } catch (err) {
      const appError = refused(err);
      if (appError.code === 'internal') ctx.state.log.error({ err }, 'link page failed');
      const { lang, strings } = pickLanguage(ctx.get('accept-language'), seen.device);
      const body: PageBody = { kind: 'message', code: appError.code, text: pageText(appError, strings) };
      ctx.status = appError.spec.httpStatus;
      for (const [name, value] of Object.entries(appError.headers)) ctx.set(name, value);
      const retry = appError.details.retryAfterSeconds;
      if (typeof retry === 'number')
        body.note = strings.retryIn.replace('{minutes}', String(Math.ceil(retry / 60)));
      const page = renderPage({ lang, strings, device: seen.device, body });
      ctx.set('Content-Security-Policy', page.csp);
      ctx.body = page.html;
      return;
    }
    // The chat page is the same for every link of a device and language: rendered and compressed once.
    const { encoded } = chatPages.page(ctx.get('accept-language'), seen.device);
    // Brotli whenever the client takes it at all (browsers list gzip first, at the same weight).
    const coding = ctx.acceptsEncodings('br') || ctx.acceptsEncodings('gzip', 'identity');
    const { body, encoding } = encoded.bytes(coding);
    ctx.set('Content-Security-Policy', encoded.csp);
    ctx.vary('Accept-Encoding');
    if (encoding) ctx.set('Content-Encoding', encoding);
    ctx.body = body;
  });

  router.post('/i/:token/conversations', async (ctx) => {
    try {
      const link = await open(ctx);
      // Consumes every cap, remembers the conversation and records it durably before the 201.
      const admitted = await deps.admission.admit(link);
      deps.metrics.admissions.inc();
      ctx.status = 201;
      ctx.body = { conversationId: admitted.conversationId };
    } catch (err) {
      throw refused(err);
    }
  });

  router.post('/i/:token/conversations/:conversationId/messages', async (ctx) => {
    let link: OpenLink;
    let messages: ChatMessage[];
    let text: string;
    const conversationId = ctx.params.conversationId as string;
    try {
      const body = await readJsonBody(ctx, { limitBytes: 64 * 1024 });
      link = await open(ctx);
      const conversation = await deps.conversations.get(conversationId);
      if (!conversation || conversation.recipientId !== link.recipient.id) {
        throw new AppError('not_found', 'This conversation does not exist or has expired.', {
          hint: 'Reload the link to start a new conversation.',
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
      messages = buildModelMessages(link, history, text, deps.limits);
    } catch (err) {
      throw refused(err);
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
      const reply = await deps.assistant.complete(messages).catch((err) => {
        throw refused(err);
      });
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
        for await (const token of deps.assistant.stream(messages)) {
          reply += token;
          send(null, { token });
        }
        await remember(reply);
        send('done', { reply });
      } catch (err) {
        const appError = toAppError(err, ctx.state.requestId);
        ctx.state.log.warn({ err, code: appError.code }, 'assistant stream failed');
        send('error', appError.toBody());
      } finally {
        stream.end();
      }
    })();
  });

  app.use(router.routes());
  app.use(router.allowedMethods({ throw: false }));
  app.use(async (ctx) => {
    if (ctx.status === 405) {
      sendError(
        ctx,
        new AppError('method_not_allowed', undefined, {
          headers: { Allow: String(ctx.response.get('Allow')) },
        }),
      );
      return;
    }
    sendError(ctx, new AppError('not_found'));
  });
  return app;
}

function wantsStream(ctx: Context): boolean {
  return (ctx.get('accept') || '').includes('text/event-stream');
}

/** The text a refusal page shows, in the page's language. */
function pageText(err: AppError, strings: ReturnType<typeof pickLanguage>['strings']): string {
  const custom =
    typeof err.details.message === 'string' && err.details.message.trim() ? err.details.message : null;
  switch (err.code) {
    case 'not_found':
      return strings.notFound;
    case 'forbidden':
      return strings.forbidden;
    case 'link_disabled':
      return custom ?? strings.disabled;
    case 'cooldown':
      return custom ?? strings.cooldown;
    default:
      return strings.unavailable;
  }
}
