import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { type AllowList, compileAllowList } from '@outreach/platform';

/** The client address: the socket's, or the first X-Forwarded-For hop when a trusted proxy sets it. */
export function clientAddress(
  socketAddress: string | undefined,
  forwardedFor: string,
  trustProxy: boolean,
): string {
  const raw = trustProxy && forwardedFor ? forwardedFor.split(',')[0].trim() : (socketAddress ?? '');
  // An IPv4 client on a dual-stack socket shows as ::ffff:a.b.c.d; allow-lists are written in IPv4.
  return raw.startsWith('::ffff:') && isIP(raw.slice(7)) === 4 ? raw.slice(7) : raw;
}

/** The client address of a request (see `clientAddress`). */
export function requestAddress(req: IncomingMessage, trustProxy: boolean): string {
  const forwarded = req.headers['x-forwarded-for'];
  return clientAddress(req.socket.remoteAddress, typeof forwarded === 'string' ? forwarded : '', trustProxy);
}

// Devices change rarely: keep each distinct list compiled instead of rebuilding it per request.
const compiled = new Map<string, AllowList>();

/** True when `ip` lies in one of the CIDR blocks; an empty list allows every address. */
export function ipAllowed(ip: string, cidrs: readonly string[]): boolean {
  const key = cidrs.join(',');
  let list = compiled.get(key);
  if (!list) {
    if (compiled.size > 1000) compiled.clear();
    list = compileAllowList(cidrs);
    compiled.set(key, list);
  }
  return list.allows(ip);
}
