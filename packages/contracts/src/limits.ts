/** The documented limits of the v1 API, in one place. */
export const LIMITS = {
  itemsPerCreate: 200,
  externalIdLength: 191,
  labelLength: 191,
  messageLength: 2000,
  metadataKeys: 24,
  metadataKeyLength: 64,
  metadataValueLength: 500,
  appendWords: 500,
  replaceChars: 7500,
  /**
   * Instructions as sent, and as stored in append mode, in characters. The modes' own limits
   * (words, characters after substitution) are the product's; this one is as long as the
   * longest text they allow by ordinary means (500 words, each a 500-character metadata value)
   * and only stops one that is not: a text of spaces (no words at all), or placeholders
   * repeated past 500 words' worth, which every check and every prompt would then carry.
   */
  instructionsChars: 256_000,
  listDefault: 50,
  listMax: 200,
  bulkDeleteIds: 500,
  maxWindowSeconds: 365 * 24 * 3600,
  maxInteractionLimit: 1_000_000_000,
  bodyBytes: 1024 * 1024,
} as const;

/**
 * How long a response is replayed under its Idempotency-Key: the gateway's stored answers and
 * the recipient service's record of a create both answer for this long, and no longer.
 */
export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

/** API key scopes. */
export const SCOPES = ['recipients:read', 'recipients:write'] as const;
export type Scope = (typeof SCOPES)[number];
