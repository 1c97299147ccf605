import { randomFillSync } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// CSPRNG bytes are drawn a block at a time: one call into the CSPRNG costs microseconds
// whatever its size, and a 200-item create batch needs 400 ids. Each byte is used once.
const BLOCK = Buffer.allocUnsafeSlow(4096);
let used = BLOCK.length;

/** Random base62 text of `length` characters from the CSPRNG, without modulo bias. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    if (used === BLOCK.length) {
      randomFillSync(BLOCK);
      used = 0;
    }
    const byte = BLOCK[used++];
    // 248 = 62 * 4: bytes at or above it would bias the first characters.
    if (byte < 248) out += BASE62[byte % 62];
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
