import { LIMITS } from './limits';
import { pageText, storableText as text } from './text-formats';

/**
 * The JSON Schemas of the v1 API (draft 2020-12). Request schemas are what the gateway
 * and recipient service validate with; response schemas describe what they send. The
 * OpenAPI document is assembled from these same objects.
 */
const S = 'https://outreach.dev/schemas/';
const nullable = (schema: object) => ({ anyOf: [schema, { type: 'null' }] });
const limit = { type: 'integer', minimum: 1, maximum: LIMITS.maxInteractionLimit };
const isoInstant = { type: 'string', format: 'date-time' };

const instructionsFields = {
  isActive: { type: 'boolean' },
  maxTotalInteractions: nullable(limit),
  maxInteractionsPerWindow: nullable(limit),
  windowSeconds: nullable({ type: 'integer', minimum: 1, maximum: LIMITS.maxWindowSeconds }),
  injectionMode: { enum: ['append', 'replace'] },
  // Length limits depend on the mode and apply after placeholder substitution (in code); this
  // bound on the text as sent comes first, so that a huge one is not substituted at all.
  injectionInstructions: nullable(text({ maxLength: LIMITS.instructionsChars })),
  disabledMessage: nullable(pageText({ maxLength: LIMITS.messageLength })),
  cooldownMessage: nullable(pageText({ maxLength: LIMITS.messageLength })),
};

export const metadataSchema = {
  $id: `${S}metadata`,
  type: 'object',
  maxProperties: LIMITS.metadataKeys,
  // `__proto__` fits the key rule but would be dropped, not stored: JavaScript objects (ours, the
  // gRPC maps', most clients') take it as their prototype instead of a key. Refused, not lost.
  propertyNames: { pattern: `^(?!__proto__$)[A-Za-z0-9_-]{1,${LIMITS.metadataKeyLength}}$` },
  additionalProperties: {
    anyOf: [text({ maxLength: LIMITS.metadataValueLength }), { type: 'number' }, { type: 'boolean' }],
  },
} as const;

export const createItemSchema = {
  $id: `${S}create-item`,
  type: 'object',
  additionalProperties: false,
  properties: {
    externalId: text({ minLength: 1, maxLength: LIMITS.externalIdLength }),
    label: text({ maxLength: LIMITS.labelLength }),
    metadata: { $ref: 'metadata' },
    ...instructionsFields,
  },
} as const;

export const createRequestSchema = {
  $id: `${S}create-request`,
  type: 'object',
  additionalProperties: false,
  required: ['campaignId', 'items'],
  properties: {
    campaignId: text({ minLength: 1, maxLength: 64 }),
    // Items are validated one by one so that a bad item fails alone.
    items: { type: 'array', minItems: 1, maxItems: LIMITS.itemsPerCreate },
  },
} as const;

export const patchSchema = {
  $id: `${S}patch`,
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    label: nullable(text({ maxLength: LIMITS.labelLength })),
    ...instructionsFields,
  },
} as const;

// Each form requires a key only it has: the validator checks a body against the form its key
// names (see keyedForms in validation.ts), so a fault is told once, for the form that was meant.
export const bulkDeleteSchema = {
  $id: `${S}bulk-delete`,
  oneOf: [
    {
      type: 'object',
      additionalProperties: false,
      required: ['ids'],
      properties: {
        ids: {
          type: 'array',
          minItems: 1,
          maxItems: LIMITS.bulkDeleteIds,
          items: text({ minLength: 1, maxLength: 64 }),
        },
      },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['all'],
      properties: { all: { const: true } },
    },
  ],
} as const;

/** Query strings arrive as text; this schema is compiled with type coercion. */
export const listQuerySchema = {
  $id: `${S}list-query`,
  type: 'object',
  additionalProperties: false,
  required: ['campaignId'],
  properties: {
    campaignId: text({ minLength: 1, maxLength: 64 }),
    limit: { type: 'integer', minimum: 1, maximum: LIMITS.listMax },
    offset: { type: 'integer', minimum: 0, maximum: 2_147_483_647 },
    active: { enum: ['true', 'false'] },
  },
} as const;

export const campaignQuerySchema = {
  $id: `${S}campaign-query`,
  type: 'object',
  additionalProperties: false,
  properties: { state: { enum: ['draft', 'upcoming', 'active', 'completed'] } },
} as const;

/** The query string of an endpoint that takes none: any parameter is refused, never ignored. */
export const noQuerySchema = {
  $id: `${S}no-query`,
  type: 'object',
  additionalProperties: false,
  properties: {},
} as const;

export const errorBodySchema = {
  $id: `${S}error`,
  type: 'object',
  additionalProperties: false,
  required: ['code', 'error', 'retryable', 'hint', 'details'],
  properties: {
    code: { type: 'string' },
    error: { type: 'string' },
    retryable: { type: 'boolean' },
    hint: { type: 'string' },
    details: { type: 'object' },
  },
} as const;

const listEntryProperties = {
  id: { type: 'string' },
  campaignId: { type: 'string' },
  externalId: nullable({ type: 'string' }),
  label: nullable({ type: 'string' }),
  isActive: { type: 'boolean' },
  link: { type: 'string', format: 'uri' },
  interactionCount: { type: 'integer', minimum: 0 },
  maxTotalInteractions: nullable({ type: 'integer' }),
  maxInteractionsPerWindow: nullable({ type: 'integer' }),
  windowSeconds: nullable({ type: 'integer' }),
  lastInteractionAt: nullable(isoInstant),
  createdAt: isoInstant,
};

export const recipientListEntrySchema = {
  $id: `${S}recipient-list-entry`,
  type: 'object',
  additionalProperties: false,
  required: Object.keys(listEntryProperties),
  properties: listEntryProperties,
} as const;

const fullProperties = {
  ...listEntryProperties,
  metadata: { type: 'object', additionalProperties: { type: 'string' } },
  deviceId: { type: 'string' },
  injectionMode: { enum: ['append', 'replace'] },
  injectionInstructions: nullable({ type: 'string' }),
  disabledMessage: nullable({ type: 'string' }),
  cooldownMessage: nullable({ type: 'string' }),
  distillationStatus: { type: 'string' },
  distillationLensId: nullable({ type: 'string' }),
  distillationError: nullable({ type: 'string' }),
};

export const recipientSchema = {
  $id: `${S}recipient`,
  type: 'object',
  additionalProperties: false,
  required: Object.keys(fullProperties),
  properties: fullProperties,
} as const;

export const createResponseSchema = {
  $id: `${S}create-response`,
  type: 'object',
  additionalProperties: false,
  required: ['created', 'failed', 'total', 'results'],
  properties: {
    created: { type: 'integer' },
    failed: { type: 'integer' },
    total: { type: 'integer' },
    results: {
      type: 'array',
      items: {
        oneOf: [
          {
            type: 'object',
            required: ['status', 'index', ...Object.keys(fullProperties)],
            additionalProperties: false,
            properties: { status: { const: 'created' }, index: { type: 'integer' }, ...fullProperties },
          },
          {
            type: 'object',
            required: ['status', 'index', 'externalId', 'id'],
            additionalProperties: false,
            properties: {
              status: { const: 'duplicate' },
              index: { type: 'integer' },
              externalId: { type: 'string' },
              id: { type: 'string' },
            },
          },
          {
            type: 'object',
            required: ['status', 'index', 'code', 'error', 'details'],
            additionalProperties: false,
            properties: {
              status: { const: 'error' },
              index: { type: 'integer' },
              externalId: { type: 'string' },
              code: { type: 'string' },
              error: { type: 'string' },
              details: { type: 'object' },
            },
          },
        ],
      },
    },
  },
} as const;

export const allowanceSchema = {
  $id: `${S}allowance`,
  type: 'object',
  additionalProperties: false,
  required: ['used', 'included', 'remaining', 'exhausted'],
  properties: {
    used: { type: 'integer', minimum: 0 },
    included: nullable({ type: 'integer', minimum: 0 }),
    remaining: nullable({ type: 'integer', minimum: 0 }),
    exhausted: { type: 'boolean' },
  },
} as const;

export const listResponseSchema = {
  $id: `${S}list-response`,
  type: 'object',
  additionalProperties: false,
  required: ['projectId', 'campaignId', 'total', 'limit', 'offset', 'allowance', 'recipients'],
  properties: {
    projectId: { type: 'string' },
    campaignId: { type: 'string' },
    total: { type: 'integer' },
    limit: { type: 'integer' },
    offset: { type: 'integer' },
    allowance: { $ref: 'allowance' },
    recipients: { type: 'array', items: { $ref: 'recipient-list-entry' } },
  },
} as const;

export const timingSchema = {
  $id: `${S}timing`,
  type: 'object',
  additionalProperties: false,
  required: ['state', 'now', 'startsInSeconds', 'runningForSeconds', 'endedAgoSeconds'],
  properties: {
    state: { enum: ['draft', 'upcoming', 'active', 'completed'] },
    now: isoInstant,
    startsInSeconds: nullable({ type: 'integer', minimum: 0 }),
    runningForSeconds: nullable({ type: 'integer', minimum: 0 }),
    endedAgoSeconds: nullable({ type: 'integer', minimum: 0 }),
  },
} as const;

export const campaignSchema = {
  $id: `${S}campaign`,
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'name',
    'state',
    'budgetMode',
    'deviceId',
    'startDate',
    'endDate',
    'recipientCount',
    'timing',
  ],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    state: { enum: ['draft', 'upcoming', 'active', 'completed'] },
    budgetMode: { enum: ['metered', 'fixed'] },
    deviceId: { type: 'string' },
    startDate: isoInstant,
    endDate: isoInstant,
    recipientCount: { type: 'integer', minimum: 0 },
    timing: { $ref: 'timing' },
  },
} as const;

export const campaignListResponseSchema = {
  $id: `${S}campaign-list-response`,
  type: 'object',
  additionalProperties: false,
  required: ['projectId', 'campaigns'],
  properties: { projectId: { type: 'string' }, campaigns: { type: 'array', items: { $ref: 'campaign' } } },
} as const;

export const deleteResponseSchema = {
  $id: `${S}delete-response`,
  type: 'object',
  additionalProperties: false,
  required: ['success', 'id'],
  properties: { success: { type: 'boolean' }, id: { type: 'string' } },
} as const;

export const bulkDeleteResponseSchema = {
  $id: `${S}bulk-delete-response`,
  type: 'object',
  additionalProperties: false,
  required: ['success', 'deleted', 'ids'],
  properties: {
    success: { type: 'boolean' },
    deleted: { type: 'integer' },
    ids: { type: 'array', items: { type: 'string' } },
    skippedCampaignIds: { type: 'array', items: { type: 'string' } },
  },
} as const;

/** Every schema, registered together so `$ref`s by `$id` resolve. */
export const ALL_SCHEMAS = [
  metadataSchema,
  createItemSchema,
  createRequestSchema,
  patchSchema,
  bulkDeleteSchema,
  listQuerySchema,
  campaignQuerySchema,
  noQuerySchema,
  errorBodySchema,
  recipientListEntrySchema,
  recipientSchema,
  createResponseSchema,
  allowanceSchema,
  listResponseSchema,
  timingSchema,
  campaignSchema,
  campaignListResponseSchema,
  deleteResponseSchema,
  bulkDeleteResponseSchema,
] as const;

/** The `$id` of a schema by short name, e.g. `schemaId('patch')`. */
export function schemaId(name: string): string {
  return `${S}${name}`;
}
