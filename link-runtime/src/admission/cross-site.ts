import type { IncomingMessage } from 'node:http';
import { AppError } from '@outreach/platform';

/**
 * The refusal of a conversation start another site's page sent (a plain HTML form posting to
 * the link, say, from a browser inside a device's allow-list), or null for one the link's own
 * page sent or one from outside a browser. A browser names where a request comes from: by
 * `Sec-Fetch-Site`, which only `same-origin` (the chat page's fetch) and `none` (the user's own
 * doing) pass; else, from a browser that sends none, by `Origin`, which must be the links'
 * public origin (`PUBLIC_BASE_URL`'s) or the request's own (`http(s)://` and its `Host`). A
 * request with neither header (API tools, curl, load generators) is not a browser's and goes
 * on. Two header reads on the hot path; nothing else unless `Origin` differs from `publicOrigin`.
 */
export function crossSiteRefusal(req: IncomingMessage, publicOrigin: string): AppError | null {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined) return site === 'same-origin' || site === 'none' ? null : crossSite();
  const origin = req.headers.origin;
  if (origin === undefined || origin === publicOrigin || isOwnOrigin(origin, req.headers.host)) return null;
  return crossSite();
}

/** True when `origin` is `http://` or `https://` and the request's own `Host`. */
function isOwnOrigin(origin: string, host: string | undefined): boolean {
  if (!host) return false;
  const hostAt = origin.startsWith('https://') ? 8 : origin.startsWith('http://') ? 7 : -1;
  return hostAt > 0 && origin.slice(hostAt).toLowerCase() === host.toLowerCase();
}

function crossSite(): AppError {
  return new AppError('forbidden', "A conversation starts only from the link's own page.", {
    hint: 'Open the link itself and send the first message there.',
    details: { reason: 'cross_site' },
  });
}
