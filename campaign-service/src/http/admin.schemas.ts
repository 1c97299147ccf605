import {
  addTextFormats,
  isLogoUrl,
  pageText,
  SCOPES,
  storableText as text,
  toProblems,
  type ValidationProblem,
} from '@outreach/contracts';
import { parseCidr } from '@outreach/platform';
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/**
 * JSON Schemas of the admin API bodies; every object refuses unknown fields, and every free text
 * is held to what PostgreSQL can store as sent (format storable-text).
 */
const name = text({ minLength: 1, maxLength: 200 });
/** The largest amount of money the admin API takes, in minor units; the dashboard's forms hold to it too. */
export const MAX_MINOR_UNITS = 1_000_000_000_000;
const minor = { type: 'integer', minimum: 0, maximum: MAX_MINOR_UNITS } as const;
const nullable = (s: object) => ({ anyOf: [s, { type: 'null' }] });
const instant = { type: 'string', format: 'date-time' } as const;

/** The device fields' schemas; the dashboard reads its limits from here to word its messages. */
export const deviceFields = {
  name,
  isActive: { type: 'boolean' },
  ipAllowList: { type: 'array', maxItems: 100, items: { type: 'string', format: 'cidr' } },
  languages: {
    type: 'array',
    maxItems: 50,
    uniqueItems: true,
    // Language tags are case-insensitive (`EN` is `en`): accepted in any case, stored lower-case.
    items: { type: 'string', pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$' },
  },
  defaultLanguage: { type: 'string', pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$' },
  styling: {
    type: 'object',
    additionalProperties: false,
    properties: {
      // The link page's heading: refused with bidi controls, as the recipients' page texts are.
      title: pageText({ maxLength: 200 }),
      primaryColor: { type: 'string', pattern: '^#[0-9A-Fa-f]{6}$' },
      backgroundColor: { type: 'string', pattern: '^#[0-9A-Fa-f]{6}$' },
      logoUrl: { type: 'string', format: 'http-url', maxLength: 2000 },
    },
  },
  voice: {
    type: 'object',
    additionalProperties: false,
    required: ['enabled'],
    properties: { enabled: { type: 'boolean' }, voiceName: text({ maxLength: 100 }) },
  },
  persona: text({ maxLength: 4000 }),
  customInstructions: text({ maxLength: 7500 }),
  knowledge: {
    type: 'array',
    maxItems: 200,
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['title', 'content'],
      properties: { title: name, content: text({ minLength: 1, maxLength: 20000 }) },
    },
  },
} as const;

const campaignFields = {
  name,
  deviceId: text({ minLength: 1, maxLength: 64 }),
  startDate: instant,
  endDate: instant,
  budgetMode: { enum: ['metered', 'fixed'] },
  pricePerConversation: nullable(minor),
  fixedPrice: nullable(minor),
  // The most links a campaign holds at once: a cap of 0 would hold none (null means no cap).
  recipientCap: nullable({ type: 'integer', minimum: 1, maximum: 10_000_000 }),
} as const;

const SCHEMAS = {
  'create-project': {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: { name },
  },
  // An operator's address, as the dashboard's forms check it further (checkedEmail).
  'operator-address': {
    type: 'object',
    additionalProperties: false,
    required: ['email'],
    properties: { email: { type: 'string', minLength: 1, maxLength: 254 } },
  },
  // The same, and whether the account is signed out everywhere at once (a session taken over).
  'password-reset': {
    type: 'object',
    additionalProperties: false,
    required: ['email'],
    properties: { email: { type: 'string', minLength: 1, maxLength: 254 }, signOut: { type: 'boolean' } },
  },
  'create-api-key': {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'scopes'],
    properties: {
      name,
      scopes: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: [...SCOPES] } },
      expiresAt: nullable(instant),
      rateLimitPerMinute: { type: 'integer', minimum: 1, maximum: 1_000_000 },
    },
  },
  'create-device': {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: deviceFields,
  },
  'patch-device': { type: 'object', additionalProperties: false, minProperties: 1, properties: deviceFields },
  'create-campaign': {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'deviceId', 'startDate', 'endDate', 'budgetMode'],
    properties: campaignFields,
  },
  'patch-campaign': {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: campaignFields,
  },
  'create-top-off': {
    type: 'object',
    additionalProperties: false,
    required: ['conversations'],
    properties: {
      conversations: { type: 'integer', minimum: 1, maximum: 100_000_000 },
      pricePerConversation: minor,
    },
  },
  'create-recipients': {
    type: 'object',
    additionalProperties: false,
    required: ['items'],
    // Items are checked one by one by RecipientService, so a bad item fails alone.
    properties: { items: { type: 'array', minItems: 1, maxItems: 200 } },
  },
  'campaign-list-query': {
    type: 'object',
    additionalProperties: false,
    properties: { state: { enum: ['draft', 'upcoming', 'active', 'completed'] } },
  },
  'statement-query': {
    type: 'object',
    additionalProperties: false,
    required: ['month'],
    properties: { month: { type: 'string', pattern: '^\\d{4}-(0[1-9]|1[0-2])$' } },
  },
  'activity-query': {
    type: 'object',
    additionalProperties: false,
    properties: {
      limit: { type: 'integer', minimum: 1, maximum: 200 },
      before: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
    },
  },
  'recipient-list-query': {
    type: 'object',
    additionalProperties: false,
    properties: {
      limit: { type: 'integer', minimum: 1, maximum: 200 },
      offset: { type: 'integer', minimum: 0 },
      active: { type: 'boolean' },
    },
  },
} as const;

/** Our own formats, named in words rather than as ajv's `must match format "…"`. */
const FORMAT_MESSAGES: Record<string, string> = {
  'http-url': 'must be an http or https address, e.g. https://example.com/logo.png',
  cidr: 'must be a CIDR block such as 203.0.113.0/24 or 2001:db8::/32',
};

function withFormatMessage(e: ErrorObject): ErrorObject {
  const message = e.keyword === 'format' ? FORMAT_MESSAGES[String(e.params.format)] : undefined;
  return message ? { ...e, message } : e;
}

/** Names of the admin schemas. */
export type AdminSchema = keyof typeof SCHEMAS;

/** Compiles every admin schema once; query schemas coerce text. Returns a checker by name. */
export function compileAdminSchemas(): (schema: AdminSchema, data: unknown) => ValidationProblem[] {
  const make = (coerce: boolean) => {
    const ajv = new Ajv2020({ allErrors: true, strict: true, coerceTypes: coerce });
    addFormats(ajv, ['date-time', 'uri']);
    ajv.addFormat('cidr', { type: 'string', validate: (s: string) => parseCidr(s) !== null });
    // `uri` alone admits javascript: and data: addresses; the link page shows only http(s) ones.
    ajv.addFormat('http-url', { type: 'string', validate: isLogoUrl });
    addTextFormats(ajv);
    return ajv;
  };
  const plain = make(false);
  const coercing = make(true);
  const compiled = new Map<AdminSchema, ValidateFunction>();
  for (const [key, schema] of Object.entries(SCHEMAS) as [AdminSchema, object][]) {
    compiled.set(key, (key.endsWith('-query') ? coercing : plain).compile(schema));
  }
  return (schema, data) => {
    const fn = compiled.get(schema) as ValidateFunction;
    return fn(data) ? [] : toProblems((fn.errors ?? []).map(withFormatMessage));
  };
}
