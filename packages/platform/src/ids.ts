import { randomFillSync } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// CSPRNG bytes are drawn a block at a time: one call into the CSPRNG costs microseconds
// whatever its size, and a 200-item create batch needs 400 ids. Each byte is used once.
const BLOCK = Buffer.allocUnsafeSlow(4096);
let used = BLOCK.length;

const BASE62_CODES = Buffer.from(BASE62, 'latin1');
// Characters are written here and read out as one flat string: a string grown a character
// at a time is a rope that every later reader (protobuf, pg) must flatten again.
const SCRATCH = Buffer.allocUnsafeSlow(256);

/** Writes `length` random base62 characters into SCRATCH from `start`; returns the end. */
function fillBase62(start: number, length: number): number {
  let n = start;
  const end = start + length;
  while (n < end) {
    if (used === BLOCK.length) {
      randomFillSync(BLOCK);
      used = 0;
    }
    const byte = BLOCK[used++];
    // 248 = 62 * 4: bytes at or above it would bias the first characters.
    if (byte < 248) SCRATCH[n++] = BASE62_CODES[byte % 62];
  }
  return end;
}

/** Random base62 text of `length` (at most 240) characters from the CSPRNG, without modulo bias. */
export function randomBase62(length: number): string {
  if (!(length >= 0 && length <= 240)) throw new RangeError(`randomBase62: length ${length} is not 0 to 240`);
  return SCRATCH.toString('latin1', 0, fillBase62(0, length));
}

/** Resource id prefixes; clients must treat ids as opaque. */
export type IdPrefix = 'prj' | 'cmp' | 'rcp' | 'dev' | 'key' | 'top' | 'cnv' | 'usb' | 'opr' | 'inv' | 'req';

// Base62 characters after an id's prefix and underscore.
const ID_BODY_LENGTH = 20;

/** A new opaque id such as `rcp_4Fz…` (about 119 random bits). */
export function newId(prefix: IdPrefix): string {
  const start = SCRATCH.write(`${prefix}_`, 'latin1');
  return SCRATCH.toString('latin1', 0, fillBase62(start, ID_BODY_LENGTH));
}

const ID_PATTERNS = new Map<IdPrefix, RegExp>();

/**
 * True when `value` has the form `newId(prefix)` gives its ids: the prefix, an underscore and 20
 * base62 characters. A value of any other form names nothing, so a caller may answer it as unknown
 * without a lookup, and never builds a store key (a Redis key with `:` in it, say) out of it.
 */
export function isIdOf(prefix: IdPrefix, value: string): boolean {
  let pattern = ID_PATTERNS.get(prefix);
  if (!pattern) {
    pattern = new RegExp(`^${prefix}_[0-9A-Za-z]{${ID_BODY_LENGTH}}$`);
    ID_PATTERNS.set(prefix, pattern);
  }
  return pattern.test(value);
}

/** A new link token: 26 base62 characters, about 154 bits from the CSPRNG. */
export function newLinkToken(): string {
  return randomBase62(26);
}
