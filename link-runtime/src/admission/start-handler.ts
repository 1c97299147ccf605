import type { IncomingMessage, ServerResponse } from 'node:http';
import { logAccess, requestIdOf, toAppError } from '@outreach/platform';
import type { Logger } from 'pino';
import { baseHeaders, decodeSegment, headerText, refuseMethod, routeSeries, sendJson } from '../http/direct';
import type { LinkMetrics } from '../metrics';
import type { Admission } from './admission.service';
import { clientAddress } from './client-ip';
import { type OpenLinkDeps, openLink } from './open-link';

/** What a conversation start is served from. */
export interface StartHandlerDeps extends OpenLinkDeps {
  logger: Logger;
  admission: Pick<Admission, 'admit'>;
  metrics: LinkMetrics;
  trustProxy: boolean;
}

const ROUTE = '/i/:token/conversations';
// As the router matched it: any case, an optional trailing slash, any query.
const START_PATH = /^\/i\/([^/?]+)\/conversations\/?(?:\?|$)/i;

/**
 * The handler of `POST /i/<token>/conversations`, the one step that admits a conversation,
 * served on node:http directly like the page: 201 `{conversationId}` or the refusal as JSON
 * with its status and headers, exactly as the app's routes answer. Returns false for any
 * other path, which the caller hands on to the app; other methods get 405.
 */
export function createStartHandler(
  deps: StartHandlerDeps,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  const series = routeSeries(deps.metrics, ROUTE);
  const duration = series.duration('POST');

  async function serve(req: IncomingMessage, res: ServerResponse, token: string): Promise<void> {
    const started = performance.now();
    const requestId = requestIdOf(headerText(req, 'x-request-id'));
    let child: Logger | undefined;
    const log = () => {
      child ??= deps.logger.child({ requestId });
      return child;
    };
    const headers = baseHeaders(requestId);
    let status = 201;
    let body: unknown;
    try {
      const ip = clientAddress(req.socket.remoteAddress, headerText(req, 'x-forwarded-for'), deps.trustProxy);
      const opened = openLink(deps, token, ip);
      const link = opened instanceof Promise ? await opened : opened;
      // Consumes every cap, remembers the conversation and records it durably before the 201.
      const admitted = await deps.admission.admit(link);
      deps.metrics.admissions.inc();
      body = { conversationId: admitted.conversationId };
    } catch (err) {
      const appError = toAppError(err, requestId);
      deps.metrics.refusals.inc({ code: appError.code });
      status = appError.spec.httpStatus;
      if (status >= 500) log().error({ err }, 'request failed');
      for (const name in appError.headers) headers.push(name, appError.headers[name]);
      body = appError.toBody();
    }
    sendJson(res, status, headers, body);
    const ms = performance.now() - started;
    duration.observe(ms / 1000);
    series.count('POST', status).inc();
    logAccess(deps.logger, log, 'POST', ROUTE, status, ms);
  }

  return (req, res) => {
    const match = START_PATH.exec(req.url ?? '');
    if (!match) return false;
    if (req.method !== 'POST') {
      refuseMethod(req, res, ['POST']);
      series.count(req.method ?? '', 405).inc();
      return true;
    }
    serve(req, res, decodeSegment(match[1])).catch((err) => {
      // serve() answers every refusal itself; this is a failure to write at all.
      deps.logger.error({ err }, 'conversation start failed');
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
    return true;
  };
}
