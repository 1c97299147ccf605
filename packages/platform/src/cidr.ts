import { BlockList, isIP } from 'node:net';

/** One parsed CIDR block. */
export interface Cidr {
  /** The address part as written (normalised by node:net when matched). */
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/**
 * Parses `a.b.c.d/n` or an IPv6 `x::y/n`; a bare address counts as a single host
 * (/32 or /128). Returns null for anything else, including out-of-range prefixes.
 */
export function parseCidr(text: string): Cidr | null {
  if (typeof text !== 'string') return null;
  const slash = text.indexOf('/');
  const address = slash === -1 ? text : text.slice(0, slash);
  // Zone ids (fe80::1%eth0) name a local interface and mean nothing in an allow-list.
  const version = address.includes('%') ? 0 : isIP(address);
  if (version === 0) return null;
  const max = version === 4 ? 32 : 128;
  let prefix = max;
  if (slash !== -1) {
    const digits = text.slice(slash + 1);
    // Digits only: Number() would also accept "", " 8", "0x10" and "1e1".
    if (!/^\d{1,3}$/.test(digits)) return null;
    prefix = Number(digits);
    if (prefix > max) return null;
  }
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** IPv4 clients often arrive as IPv4-mapped IPv6 (`::ffff:1.2.3.4`); match them as IPv4. */
function unmap(ip: string): string {
  const m = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  return m ? m[1] : ip;
}

/** A compiled allow-list; build it once per list and reuse it for every request. */
export interface AllowList {
  allows(ip: string): boolean;
}

/**
 * Compiles CIDR blocks into a matcher. An empty list allows every address; entries
 * that do not parse are ignored here (validate them on write with `parseCidr`).
 */
export function compileAllowList(blocks: readonly string[]): AllowList {
  const parsed = blocks.map(parseCidr).filter((c): c is Cidr => c !== null);
  if (blocks.length === 0) return { allows: () => true };
  const list = new BlockList();
  for (const c of parsed) list.addSubnet(c.address, c.prefix, c.family);
  return {
    allows(ip: string): boolean {
      const addr = unmap(ip);
      const version = isIP(addr);
      if (version === 0) return false;
      return list.check(addr, version === 4 ? 'ipv4' : 'ipv6');
    },
  };
}

/** True when `ip` lies in one of the blocks, or when the list is empty (no restriction). */
export function ipInAllowList(ip: string, blocks: readonly string[]): boolean {
  return compileAllowList(blocks).allows(ip);
}
