import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '@outreach/platform';
import type { Logger } from 'pino';
import { baseHeaders, directRoute, refusalOf, sendJson } from '../http/direct';
import type { LinkMetrics } from '../metrics';
import type { Admission } from './admission.service';
import { requestAddress } from './client-ip';
import { crossSiteRefusal } from './cross-site';
import { type OpenLinkDeps, openLink } from './open-link';
import { START_KEY } from './start-once';

/** The client's key of a start (`Idempotency-Key`), undefined without one; 400 when malformed. */
function startKeyOf(req: IncomingMessage): string | undefined {
  const key = req.headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (typeof key === 'string' && START_KEY.test(key)) return key;
  throw new AppError('invalid_request', 'The Idempotency-Key header is malformed.', {
    details: { header: 'Idempotency-Key', rule: 'pattern' },
    hint: 'Send 16 to 64 characters of A-Z, a-z, 0-9, "_" and "-", the same for each retry of one start.',
  });
}

/** What a conversation start is served from. */
export interface StartHandlerDeps extends OpenLinkDeps {
  logger: Logger;
  admission: Pick<Admission, 'admit' | 'admitOnce'>;
  metrics: LinkMetrics;
  trustProxy: boolean;
  trustedHops: number;
  /** The origin of `PUBLIC_BASE_URL`, whence the links' pages start conversations (see crossSiteRefusal). */
  publicOrigin: string;
}

/**
 * The handler of `POST /i/<token>/conversations`, the one step that admits a conversation,
 * served on node:http directly like the page: 201 `{conversationId}` or the refusal as JSON
 * (403 `forbidden`, `details.reason` `cross_site`, for a start another site's page sent)
 * with its status and headers, exactly as the app's routes answer. Returns false for any
 * other path, which the caller hands on to the app; other methods get 405.
 */
export function createStartHandler(
  deps: StartHandlerDeps,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  return directRoute(deps, {
    route: '/i/:token/conversations',
    // As the router matched it: any case, an optional trailing slash, any query.
    path: /^\/i\/([^/?]+)\/conversations\/?(?:\?|$)/i,
    methods: ['POST'],
    async serve(req, res, request) {
      const headers = baseHeaders(request.requestId);
      let status = 201;
      let body: unknown;
      try {
        // Before anything is looked up or counted: another site's start consumes nothing.
        const crossSite = crossSiteRefusal(req, deps.publicOrigin);
        if (crossSite) throw crossSite;
        const key = startKeyOf(req);
        const opened = openLink(deps, request.token, requestAddress(req, deps));
        const link = opened instanceof Promise ? await opened : opened;
        // Consumes every cap, remembers the conversation and records it durably before the 201;
        // with the client's key, a repeat of a start already made gets its conversation again.
        const started =
          key === undefined
            ? { ...(await deps.admission.admit(link)), repeated: false }
            : await deps.admission.admitOnce(link, key);
        if (!started.repeated) deps.metrics.admissions.inc();
        body = { conversationId: started.conversationId };
      } catch (err) {
        const refusal = refusalOf(deps.metrics, err, request, headers, 'conversation start failed');
        status = refusal.spec.httpStatus;
        body = refusal.toBody();
      }
      sendJson(res, status, headers, body);
      return status;
    },
  });
}
