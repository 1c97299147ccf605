import { ALL_SCHEMAS, LIMITS, SCOPES, schemaId } from '@outreach/contracts';
import { ERROR_CATALOGUE } from '@outreach/platform';
import { WINDOW_SECONDS } from './rate-limiter';

/**
 * The OpenAPI 3.1 document of /api/v1, assembled from the same JSON Schema objects the
 * services validate with: each schema becomes a component named by its `$id`, and its
 * `$ref`s are rewritten to point at components.
 */
const BASE = schemaId('');
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

function rewrite(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rewrite);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === '$id') continue;
    if (k === '$ref' && typeof v === 'string') {
      out[k] = `#/components/schemas/${v.startsWith(BASE) ? v.slice(BASE.length) : v}`;
    } else out[k] = rewrite(v);
  }
  return out;
}

const RATE_HEADERS = {
  'X-RateLimit-Limit': 'Requests allowed in the current window.',
  'X-RateLimit-Remaining': 'Requests left in the current window.',
  'X-RateLimit-Reset': 'Unix time (seconds) at which the window resets.',
  'X-RateLimit-Used': 'Requests counted in the current window.',
  'RateLimit-Policy': `IETF draft policy, e.g. "per-key";q=600;w=${WINDOW_SECONDS}.`,
  RateLimit: 'IETF draft state, e.g. "per-key";r=599;t=42 (remaining, seconds to reset).',
  'X-Request-Id': 'The request id (yours when you sent a sane one); quote it when reporting a problem.',
};

const headerRefs = (extra: string[] = []) =>
  Object.fromEntries(
    [...Object.keys(RATE_HEADERS), ...extra].map((h) => [h, { $ref: `#/components/headers/${h}` }]),
  );

const json = (schema: object) => ({ 'application/json': { schema } });

// Codes only the public recipient links send, never /api/v1.
const LINK_ONLY = new Set(['link_disabled', 'cooldown', 'budget_exhausted']);

/** Codes each refusal status may carry on these endpoints. */
function errorResponse(status: number, extraHeaders: string[] = []) {
  const codes = Object.entries(ERROR_CATALOGUE)
    .filter(([c, s]) => s.httpStatus === status && !LINK_ONLY.has(c))
    .map(([c]) => c);
  return {
    description: `Refusal with code ${codes.join(' or ')}.`,
    'x-error-codes': codes,
    headers: headerRefs(extraHeaders),
    content: json(ref('error')),
  };
}

interface Op {
  summary: string;
  scope: (typeof SCOPES)[number];
  params?: object[];
  body?: object;
  success: { status: number; description: string; schema: object };
  errors: number[];
  description?: string;
}

const projectId = { name: 'projectId', in: 'path', required: true, schema: { type: 'string' } };
const recipientId = { name: 'recipientId', in: 'path', required: true, schema: { type: 'string' } };
const idempotencyKey = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes the request safe to retry: the first response under this key is replayed for 24 hours. 1 to 255 visible ASCII characters.',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};

function queryParams(schema: { properties: object; required?: readonly string[] }) {
  return Object.entries(schema.properties).map(([name, s]) => ({
    name,
    in: 'query',
    required: (schema.required ?? []).includes(name),
    schema: s,
  }));
}

function operation(op: Op) {
  const withBody = op.body !== undefined;
  const responses: Record<string, object> = {
    [op.success.status]: {
      description: op.success.description,
      headers: headerRefs(withBody ? ['Idempotent-Replayed'] : []),
      content: json(op.success.schema),
    },
  };
  const common = [401, 403, 429, 500, 503, ...op.errors, ...(withBody ? [409, 413, 415, 422] : [])];
  for (const status of [...new Set(common)].sort()) {
    if (responses[status]) continue;
    const extra = status === 401 ? ['WWW-Authenticate'] : status === 429 ? ['Retry-After'] : [];
    responses[status] = errorResponse(status, extra);
  }
  return {
    summary: op.summary,
    description: `${op.description ?? ''}${op.description ? '\n\n' : ''}Requires scope \`${op.scope}\`.`,
    security: [{ bearer: [op.scope] }],
    parameters: [projectId, ...(op.params ?? []), ...(withBody ? [idempotencyKey] : [])],
    ...(withBody ? { requestBody: { required: true, content: json(op.body as object) } } : {}),
    responses,
  };
}

/** Builds the OpenAPI document (pure; served at /api/v1/openapi.json). */
export function buildOpenApi(serverUrl = '/'): Record<string, unknown> {
  const schemas = Object.fromEntries(
    ALL_SCHEMAS.map((s) => [s.$id.slice(BASE.length), rewrite(s)] as [string, unknown]),
  );
  const listQuery = ALL_SCHEMAS.find((s) => s.$id === schemaId('list-query')) as {
    properties: object;
    required: readonly string[];
  };
  const campaignQuery = ALL_SCHEMAS.find((s) => s.$id === schemaId('campaign-query')) as {
    properties: object;
  };
  const p = '/api/v1/projects/{projectId}';
  const notFoundOnly = [404];
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'Outreach API',
      version: '1.0.0',
      description: `Campaigns (read-only) and recipient links. Rate limits use a ${WINDOW_SECONDS}-second window; request bodies are at most ${LIMITS.bodyBytes} bytes. A path under /api that does not exist is 404 not_found; a method a path does not support is 405 method_not_allowed with an Allow header. Every response carries the rate-limit headers and X-Request-Id. See docs/api.md.`,
    },
    servers: [{ url: serverUrl }],
    security: [{ bearer: [] }],
    paths: {
      [`${p}/campaigns`]: {
        get: operation({
          summary: 'List campaigns',
          description: 'Every campaign of the project, ordered by creation time then id.',
          scope: 'recipients:read',
          params: queryParams(campaignQuery),
          success: { status: 200, description: 'The campaigns.', schema: ref('campaign-list-response') },
          errors: [400],
        }),
      },
      [`${p}/recipients`]: {
        post: operation({
          summary: 'Create recipients',
          description:
            '201 when at least one recipient was created, 422 with the same body when none was. Results follow the order of the items and carry their index.',
          scope: 'recipients:write',
          body: ref('create-request'),
          success: { status: 201, description: 'At least one created.', schema: ref('create-response') },
          errors: [400, 404, 409, 422],
        }),
        get: operation({
          summary: 'List recipients of a campaign',
          description: 'Ordered by creation time then id.',
          scope: 'recipients:read',
          params: queryParams(listQuery),
          success: { status: 200, description: 'One page.', schema: ref('list-response') },
          errors: [400, 404],
        }),
      },
      [`${p}/recipients/{recipientId}`]: {
        get: operation({
          summary: 'Get a recipient',
          scope: 'recipients:read',
          params: [recipientId],
          success: { status: 200, description: 'The recipient.', schema: ref('recipient-list-entry') },
          errors: notFoundOnly,
        }),
        patch: operation({
          summary: 'Update a recipient',
          scope: 'recipients:write',
          params: [recipientId],
          body: ref('patch'),
          success: {
            status: 200,
            description: 'The updated recipient.',
            schema: ref('recipient-list-entry'),
          },
          errors: [400, 404, 409],
        }),
        delete: operation({
          summary: 'Delete a recipient',
          scope: 'recipients:write',
          params: [recipientId],
          success: { status: 200, description: 'Deleted.', schema: ref('delete-response') },
          errors: [404, 409],
        }),
      },
      [`${p}/recipients/bulk-delete`]: {
        post: operation({
          summary: 'Delete many recipients',
          scope: 'recipients:write',
          body: ref('bulk-delete'),
          success: { status: 200, description: 'What was deleted.', schema: ref('bulk-delete-response') },
          errors: [400, 409],
        }),
      },
    },
    components: {
      schemas,
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: `API key from the dashboard, with scopes ${SCOPES.join(', ')}.`,
        },
      },
      headers: {
        ...Object.fromEntries(
          Object.entries(RATE_HEADERS).map(([h, d]) => [h, { description: d, schema: { type: 'string' } }]),
        ),
        'Retry-After': { description: 'Whole seconds to wait before retrying.', schema: { type: 'integer' } },
        'WWW-Authenticate': { description: 'Always a Bearer challenge.', schema: { type: 'string' } },
        Allow: { description: 'Methods the path supports.', schema: { type: 'string' } },
        'Idempotent-Replayed': {
          description:
            '"true" when this response is the replay of an earlier one with the same Idempotency-Key.',
          schema: { type: 'string' },
        },
      },
    },
  };
}
