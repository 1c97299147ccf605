import type { IncomingMessage, ServerResponse } from 'node:http';
import { type DeviceSnapshot, prepareKnowledge } from '@outreach/contracts';
import type { AppError } from '@outreach/platform';
import accepts from 'accepts';
import type { Logger } from 'pino';
import type { Admission } from '../admission/admission.service';
import { requestAddress } from '../admission/client-ip';
import { countersApply } from '../admission/link-checks';
import { type OpenLinkDeps, openLink } from '../admission/open-link';
import { baseHeaders, directRoute, headerText, refusalOf } from '../http/direct';
import type { LinkMetrics } from '../metrics';
import { ChatPages } from './chat-pages';
import { pickLanguage, retryInText, type UiStrings } from './i18n';
import { type PageBody, renderPage } from './render';

/** What the link page is served from. */
export interface PageHandlerDeps extends OpenLinkDeps {
  logger: Logger;
  admission: Pick<Admission, 'check'>;
  metrics: LinkMetrics;
  trustProxy: boolean;
  trustedHops: number;
  limits: { maxChars: number };
  /** The longest a reply may take (the assistant's deadline), which the page waits for. */
  replyMs: number;
}

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
  // A visitor who opens the page writes in a moment: the device's knowledge is indexed meanwhile,
  // here rather than for every device the process hears of, as most are never opened on this pod.
  const pages = new ChatPages({ maxChars: deps.limits.maxChars, replyMs: deps.replyMs }, (device) => {
    prepareKnowledge(device.knowledge).catch((err) =>
      deps.logger.warn({ err, deviceId: device.id }, 'indexing device knowledge failed'),
    );
  });
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
  return directRoute(deps, {
    route: '/i/:token',
    // As the router matched it: any case, an optional trailing slash, any query.
    path: /^\/i\/([^/?]+)\/?(?:\?|$)/i,
    methods: ['HEAD', 'GET'],
    async serve(req, res, request) {
      const headers = baseHeaders(request.requestId);
      headers.push('Content-Type', HTML);
      const seen: { device?: DeviceSnapshot } = {};
      let status = 200;
      let body: Buffer;
      try {
        // Awaited only when not answered at once: a cached link with no counter to ask waits for nothing.
        const opened = openLink(deps, request.token, requestAddress(req, deps), seen);
        const link = opened instanceof Promise ? await opened : opened;
        if (countersApply(link)) await deps.admission.check(link);
        // The chat page is the same for every link of a device and language: rendered and compressed once.
        const { encoded } = pages.page(headerText(req, 'accept-language'), seen.device);
        const bytes = encoded.bytes(codingOf(req));
        body = bytes.body;
        headers.push('Content-Security-Policy', encoded.csp, 'Vary', 'Accept-Encoding');
        if (bytes.encoding) headers.push('Content-Encoding', bytes.encoding);
      } catch (err) {
        const refusal = refusalOf(deps.metrics, err, request, headers, 'link page failed');
        status = refusal.spec.httpStatus;
        const page = refusalPage(refusal, headerText(req, 'accept-language'), seen.device);
        headers.push('Content-Security-Policy', page.csp);
        body = Buffer.from(page.html, 'utf8');
      }
      headers.push('Content-Length', String(body.length));
      res.writeHead(status, headers);
      res.end(body);
      return status;
    },
  });
}

/** The page of a refusal, in the visitor's language among the device's. */
function refusalPage(err: AppError, acceptLanguage: string, device: DeviceSnapshot | undefined) {
  const { lang, textLang, strings } = pickLanguage(acceptLanguage, device);
  const custom = operatorText(err);
  const body: PageBody = { kind: 'message', code: err.code, text: custom ?? pageText(err, strings) };
  if (custom !== null && lang !== textLang) body.lang = lang;
  const retry = err.details.retryAfterSeconds;
  if (typeof retry === 'number') body.note = retryInText(strings.retryIn, retry, textLang);
  return renderPage({ lang, textLang, strings, device, body });
}

/** The operator's own text of a refusal (disabledMessage, cooldownMessage), or null for ours. */
function operatorText(err: AppError): string | null {
  if (err.code !== 'link_disabled' && err.code !== 'cooldown') return null;
  const message = err.details.message;
  return typeof message === 'string' && message.trim() ? message : null;
}

/** The page's own text of a refusal, in the page's language. */
function pageText(err: AppError, strings: UiStrings): string {
  switch (err.code) {
    case 'not_found':
      return strings.notFound;
    case 'forbidden':
      return strings.forbidden;
    case 'link_disabled':
      return strings.disabled;
    case 'cooldown':
      return strings.cooldown;
    case 'unavailable':
    case 'budget_exhausted':
      // "Try again later" only where a later visit may open it (a campaign not live yet, a store
      // out of reach); an ended or halted campaign and a used-up budget tell whom to ask instead.
      return err.retryable ? strings.unavailable : strings.unavailableContact;
    default:
      return strings.unavailable;
  }
}
