import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Random base62 text of `length` characters from the CSPRNG, without modulo bias. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 62 * 4: bytes at or above it would bias the first characters.
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** Resource id prefixes; clients must treat ids as opaque. */
export type IdPrefix = 'prj' | 'cmp' | 'rcp' | 'dev' | 'key' | 'top' | 'cnv' | 'opr' | 'req';

/** A new opaque id such as `rcp_4Fz…` (about 119 random bits). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(20)}`;
}

/** A new link token: 26 base62 characters, about 154 bits from the CSPRNG. */
export function newLinkToken(): string {
  return randomBase62(26);
}
