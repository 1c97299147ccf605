import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DeviceSnapshot } from '@outreach/contracts';
import { type AppError, logAccess, requestIdOf, toAppError } from '@outreach/platform';
import accepts from 'accepts';
import type { Logger } from 'pino';
import type { Admission } from '../admission/admission.service';
import { clientAddress } from '../admission/client-ip';
import { countersApply } from '../admission/link-checks';
import { type OpenLinkDeps, openLink } from '../admission/open-link';
import { baseHeaders, decodeSegment, headerText, refuseMethod, routeSeries } from '../http/direct';
import type { LinkMetrics } from '../metrics';
import { ChatPages } from './chat-pages';
import { pickLanguage, type UiStrings } from './i18n';
import { type PageBody, renderPage } from './render';

/** What the link page is served from. */
export interface PageHandlerDeps extends OpenLinkDeps {
  logger: Logger;
  admission: Pick<Admission, 'check'>;
  metrics: LinkMetrics;
  trustProxy: boolean;
}

const ROUTE = '/i/:token';
// As the router matched it: any case, an optional trailing slash, any query.
const PAGE_PATH = /^\/i\/([^/?]+)\/?(?:\?|$)/i;
const HTML = 'text/html; charset=utf-8';
// Accept-Encoding values are client-chosen: bound how many distinct ones are remembered.
const MAX_CODINGS = 256;

/**
 * The handler of `/i/<token>`, the page every customer opens, served on node:http directly:
 * per view it only resolves the link from memory and picks bytes rendered once, so the
 * framework's per-request objects would cost more than the page itself. Returns false for any
 * other path, which the caller hands on to the app. GET and HEAD serve the page or the refusal
 * page; other methods get 405 like every route of the app.
 */
export function createPageHandler(
  deps: PageHandlerDeps,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  const pages = new ChatPages();
  const codings = new Map<string, string | false>();
  const codingOf = (req: IncomingMessage): string | false => {
    const header = req.headers['accept-encoding'] ?? '';
    let coding = codings.get(header);
    if (coding === undefined) {
      // Brotli whenever the client takes it at all (browsers list gzip first, at the same weight).
      const negotiate = accepts(req);
      coding = negotiate.encodings('br') || negotiate.encodings('gzip', 'identity');
      if (codings.size >= MAX_CODINGS) codings.clear();
      codings.set(header, coding);
    }
    return coding;
  };
  const series = routeSeries(deps.metrics, ROUTE);
  const durations = { GET: series.duration('GET'), HEAD: series.duration('HEAD') };

  async function serve(req: IncomingMessage, res: ServerResponse, token: string): Promise<void> {
    const started = performance.now();
    const method = req.method === 'HEAD' ? 'HEAD' : 'GET';
    const requestId = requestIdOf(headerText(req, 'x-request-id'));
    let child: Logger | undefined;
    const log = () => {
      child ??= deps.logger.child({ requestId });
      return child;
    };
    const headers = baseHeaders(requestId);
    headers.push('Content-Type', HTML);
    const seen: { device?: DeviceSnapshot } = {};
    let status = 200;
    let body: Buffer;
    try {
      const ip = clientAddress(req.socket.remoteAddress, headerText(req, 'x-forwarded-for'), deps.trustProxy);
      // Awaited only when not answered at once: a cached link with no counter to ask waits for nothing.
      const opened = openLink(deps, token, ip, seen);
      const link = opened instanceof Promise ? await opened : opened;
      if (countersApply(link)) await deps.admission.check(link);
      // The chat page is the same for every link of a device and language: rendered and compressed once.
      const { encoded } = pages.page(headerText(req, 'accept-language'), seen.device);
      const bytes = encoded.bytes(codingOf(req));
      body = bytes.body;
      headers.push('Content-Security-Policy', encoded.csp, 'Vary', 'Accept-Encoding');
      if (bytes.encoding) headers.push('Content-Encoding', bytes.encoding);
    } catch (err) {
      const appError = toAppError(err, requestId);
      deps.metrics.refusals.inc({ code: appError.code });
      if (appError.code === 'internal') log().error({ err }, 'link page failed');
      status = appError.spec.httpStatus;
      for (const name in appError.headers) headers.push(name, appError.headers[name]);
      const page = refusalPage(appError, headerText(req, 'accept-language'), seen.device);
      headers.push('Content-Security-Policy', page.csp);
      body = Buffer.from(page.html, 'utf8');
    }
    headers.push('Content-Length', String(body.length));
    res.writeHead(status, headers);
    res.end(body);
    const ms = performance.now() - started;
    durations[method].observe(ms / 1000);
    series.count(method, status).inc();
    logAccess(deps.logger, log, method, ROUTE, status, ms);
  }

  return (req, res) => {
    const match = PAGE_PATH.exec(req.url ?? '');
    if (!match) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      refuseMethod(req, res, ['HEAD', 'GET']);
      series.count(req.method ?? '', 405).inc();
      return true;
    }
    serve(req, res, decodeSegment(match[1])).catch((err) => {
      // serve() answers every refusal itself; this is a failure to write at all.
      deps.logger.error({ err }, 'link page failed');
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
    return true;
  };
}

/** The page of a refusal, in the visitor's language among the device's. */
function refusalPage(err: AppError, acceptLanguage: string, device: DeviceSnapshot | undefined) {
  const { lang, strings } = pickLanguage(acceptLanguage, device);
  const body: PageBody = { kind: 'message', code: err.code, text: pageText(err, strings) };
  const retry = err.details.retryAfterSeconds;
  if (typeof retry === 'number')
    body.note = strings.retryIn.replace('{minutes}', String(Math.ceil(retry / 60)));
  return renderPage({ lang, strings, device, body });
}

/** The text a refusal page shows, in the page's language. */
function pageText(err: AppError, strings: UiStrings): string {
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
