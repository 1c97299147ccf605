import { createHash, randomBytes } from 'node:crypto';

/**
 * The dashboard's bearer secrets (session ids, known-device tokens, invitation links): 256
 * random bits in base64url, stored only as their hex SHA-256. No slow hash is needed, as they are
 * not guessable.
 */
export function newSecretToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Whether `value` has the form newSecretToken gives, so that anything else is refused without a lookup. */
export function isSecretToken(value: string): boolean {
  return /^[\w-]{43}$/.test(value);
}

/** The stored form of a secret token: hex SHA-256. */
export function hashSecretToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
