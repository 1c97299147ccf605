import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { type AllowList, compileAllowList } from '@outreach/platform';

/**
 * The client address: the socket's, or behind `trustedHops` trusted proxies that each append the
 * address they were reached from to X-Forwarded-For, the entry that many from its end. Entries
 * before it are whatever the client sent, and a client may send anything (a forged first entry
 * once passed a device's allow-list from inside the cluster).
 */
export function clientAddress(
  socketAddress: string | undefined,
  forwardedFor: string,
  trustProxy: boolean,
  trustedHops = 1,
): string {
  const hops = trustProxy && forwardedFor ? forwardedFor.split(',') : [];
  const raw = hops.length > 0 ? hops[Math.max(0, hops.length - trustedHops)].trim() : (socketAddress ?? '');
  // An IPv4 client on a dual-stack socket shows as ::ffff:a.b.c.d; allow-lists are written in IPv4.
  return raw.startsWith('::ffff:') && isIP(raw.slice(7)) === 4 ? raw.slice(7) : raw;
}

/** How a service reads client addresses behind proxies (TRUST_PROXY, TRUSTED_PROXY_HOPS). */
export interface ProxyTrust {
  trustProxy: boolean;
  trustedHops: number;
}

/** The client address of a request (see `clientAddress`). */
export function requestAddress(req: IncomingMessage, trust: ProxyTrust): string {
  const forwarded = req.headers['x-forwarded-for'];
  return clientAddress(
    req.socket.remoteAddress,
    typeof forwarded === 'string' ? forwarded : '',
    trust.trustProxy,
    trust.trustedHops,
  );
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
