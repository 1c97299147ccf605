import { BlockList, isIP } from 'node:net';

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

const lists = new Map<string, BlockList>();

function compile(cidrs: readonly string[]): BlockList {
  const key = cidrs.join(',');
  const cached = lists.get(key);
  if (cached) return cached;
  const list = new BlockList();
  for (const entry of cidrs) {
    const [addr, bits] = entry.trim().split('/');
    const family = isIP(addr);
    if (family === 0) continue;
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(addr, type);
    else list.addSubnet(addr, Number(bits), type);
  }
  if (lists.size > 1000) lists.clear();
  lists.set(key, list);
  return list;
}

/** True when `ip` lies in one of the CIDR blocks; an empty list allows every address. */
export function ipAllowed(ip: string, cidrs: readonly string[]): boolean {
  if (cidrs.length === 0) return true;
  const family = isIP(ip);
  if (family === 0) return false;
  return compile(cidrs).check(ip, family === 4 ? 'ipv4' : 'ipv6');
}
