import { randomFillSync } from 'node:crypto';

const NONCE_BYTES = 16;
const POOL_BYTES = NONCE_BYTES * 256;

/**
 * Fresh CSP nonces (16 CSPRNG bytes, base64). The bytes come from a pool filled 4 KiB at a time:
 * one call into the CSPRNG per 256 nonces instead of one per page; no byte is ever handed out twice.
 */
export class NonceSource {
  private readonly pool = Buffer.alloc(POOL_BYTES);
  private offset = POOL_BYTES;

  /** The next unused nonce. */
  next(): string {
    if (this.offset >= POOL_BYTES) {
      randomFillSync(this.pool);
      this.offset = 0;
    }
    const nonce = this.pool.toString('base64', this.offset, this.offset + NONCE_BYTES);
    this.offset += NONCE_BYTES;
    return nonce;
  }
}
