import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { baseHeaders, directRoute, refusalOf, sendJson } from '../http/direct';
import type { LinkMetrics } from '../metrics';
import type { Admission } from './admission.service';
import { requestAddress } from './client-ip';
import { type OpenLinkDeps, openLink } from './open-link';

/** What a conversation start is served from. */
export interface StartHandlerDeps extends OpenLinkDeps {
  logger: Logger;
  admission: Pick<Admission, 'admit'>;
  metrics: LinkMetrics;
  trustProxy: boolean;
  trustedHops: number;
}

/**
 * The handler of `POST /i/<token>/conversations`, the one step that admits a conversation,
 * served on node:http directly like the page: 201 `{conversationId}` or the refusal as JSON
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
        const opened = openLink(deps, request.token, requestAddress(req, deps));
        const link = opened instanceof Promise ? await opened : opened;
        // Consumes every cap, remembers the conversation and records it durably before the 201.
        const admitted = await deps.admission.admit(link);
        deps.metrics.admissions.inc();
        body = { conversationId: admitted.conversationId };
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
