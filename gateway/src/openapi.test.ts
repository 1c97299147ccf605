import { ALL_SCHEMAS } from '@outreach/contracts';
import { ERROR_CATALOGUE } from '@outreach/platform';
import { buildOpenApi } from './openapi';

test('every contracts schema is a component and every $ref points at one', () => {
  const doc = buildOpenApi() as { components: { schemas: Record<string, unknown> } };
  const names = Object.keys(doc.components.schemas);
  expect(names).toHaveLength(ALL_SCHEMAS.length);
  const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]);
  for (const r of refs) {
    const [, kind, name] = /^#\/components\/(schemas|headers)\/(.+)$/.exec(r) ?? [];
    expect([r, kind !== undefined]).toEqual([r, true]);
    expect((doc.components as Record<string, Record<string, unknown>>)[kind][name]).toBeDefined();
  }
  expect(JSON.stringify(doc)).not.toContain('"$id"');
});

test('every operation documents its scope, the refusals and the rate-limit headers', () => {
  const doc = buildOpenApi() as { paths: Record<string, Record<string, Record<string, never>>> };
  const ops = Object.values(doc.paths).flatMap((p) => Object.values(p));
  expect(ops).toHaveLength(7);
  for (const op of ops) {
    const statuses = Object.keys(op.responses as object);
    expect(statuses).toEqual(expect.arrayContaining(['401', '403', '429', '503']));
    expect(JSON.stringify(op.security)).toMatch(/recipients:(read|write)/);
    const success = (op.responses as Record<string, { headers: object }>)[statuses[0]];
    expect(Object.keys(success.headers)).toEqual(expect.arrayContaining(['X-RateLimit-Limit', 'RateLimit']));
  }
});

test('every API error code of the catalogue appears in some documented response', () => {
  const text = JSON.stringify(buildOpenApi());
  const linkOnly = ['link_disabled', 'cooldown', 'budget_exhausted', 'method_not_allowed'];
  for (const code of Object.keys(ERROR_CATALOGUE).filter((c) => !linkOnly.includes(c))) {
    expect([code, text.includes(`"${code}"`)]).toEqual([code, true]);
  }
  expect(text).not.toContain('"link_disabled"');
});

describe('the document states the product decisions an API user needs', () => {
  // biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is plain JSON
  const doc = buildOpenApi() as any;
  const p = '/api/v1/projects/{projectId}';
  const op = (path: string, method: string) => doc.paths[`${p}${path}`][method];
  const schema = (name: string) => doc.components.schemas[name];

  test('the overview states ids, instants, request ids, errors and rate limits', () => {
    const info: string = doc.info.description;
    for (const prefix of ['prj_', 'cmp_', 'rcp_', 'dev_', 'key_']) expect(info).toContain(prefix);
    expect(info).toMatch(/opaque/);
    expect(info).toMatch(/never parse/);
    expect(info).toMatch(/ISO 8601 in UTC with milliseconds/);
    expect(info).toContain('2026-11-22T10:00:00.000Z');
    expect(info).toContain('X-Request-Id');
    expect(info).toContain('traceparent');
    expect(info).toContain('read-only');
    expect(info).toContain('project_mismatch');
    expect(info).toContain('requiredScope');
    for (const h of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-RateLimit-Used']) {
      expect(info).toContain(h);
    }
    expect(info).toMatch(/errors included/);
    expect(info).toMatch(/else 600 requests/);
    expect(info).toMatch(/Retry-After/);
    expect(info).toContain('not_editable');
    expect(info).toContain('method_not_allowed');
  });

  test('the campaign list and campaign schema describe state derivation and budget modes', () => {
    const list = op('/campaigns', 'get');
    for (const d of [list.description, schema('campaign').description]) {
      expect(d).toMatch(/derived from facts/);
      expect(d).toMatch(/`draft` until the campaign is launched/);
      expect(d).toMatch(/`upcoming` before `startDate`/);
      expect(d).toMatch(/`active` from `startDate` until `endDate`/);
      expect(d).toMatch(/`completed` from `endDate` or from a halt, whichever comes first/);
    }
    expect(list.description).toMatch(/read-only/);
    expect(list.description).toMatch(/ordered by creation time, then id/);
    expect(list.description).toMatch(/`metered`.*`fixed`/);
    expect(schema('campaign').properties.budgetMode.description).toMatch(/`metered`.*`fixed`/);
    expect(schema('timing').properties.endedAgoSeconds.description).toMatch(/halt/);
  });

  test('allowance says what its fields mean and when they are null', () => {
    const a = schema('allowance');
    expect(a.description).toContain('`included: null, remaining: null, exhausted: false`');
    expect(a.description).toMatch(/metered one without any top-off, and every fixed one/);
    expect(a.properties.used.description).toMatch(/never gives any back/);
    expect(a.properties.included.description).toMatch(/top-offs/);
    expect(a.properties.remaining.description).toContain('max(included − used, 0)');
    expect(a.properties.exhausted.description).toContain('used ≥ included');
  });

  test('create states request- and item-level faults, duplicates, the cap and the safety check', () => {
    const create = op('/recipients', 'post');
    const d: string = create.description;
    expect(d).toMatch(/Request-level faults.*400 and create nothing/);
    expect(d).toMatch(/Item-level faults.*`error` result/);
    expect(d).toMatch(/201 when at least one recipient was created; 422 with the same body when none was/);
    expect(d).toMatch(/`duplicate` result with the `id` of the recipient holding it/);
    expect(d).toContain('cap_exceeded');
    expect(d).toMatch(/cap, existing, requested/);
    expect(d).toMatch(/one atomic step/);
    expect(d).toContain('safety_refused');
    expect(d).toMatch(/placeholders are substituted before the length limits/);
    expect(create.responses['409'].description).toContain('cap_exceeded');
    expect(create.responses['409'].description).toContain('not_editable');
    expect(create.responses['422'].description).toMatch(/create response/);
    const instructions: string = schema('create-item').properties.injectionInstructions.description;
    expect(instructions).toMatch(/substituted first/);
    expect(instructions).toMatch(/applies to the substituted text/);
    expect(instructions).toContain('safety_refused');
  });

  test('the list says values are refused and never clamped, and what total counts', () => {
    const list = op('/recipients', 'get');
    expect(list.description).toMatch(/never clamped/);
    expect(list.description).toMatch(/ordered by creation time, then id/);
    expect(list.description).toMatch(
      /`total` counts every recipient of the campaign, whatever the `active` filter/,
    );
    expect(list.responses['400'].description).toMatch(/never clamped/);
    const limit = list.parameters.find((x: { name: string }) => x.name === 'limit');
    expect(limit.description).toMatch(/never clamped/);
    expect(schema('list-response').properties.total.description).toMatch(/whatever the `active` filter/);
  });

  test('PATCH, DELETE and bulk delete state not_editable; PATCH its empty body and immutable fields', () => {
    const patch = op('/recipients/{recipientId}', 'patch');
    const del = op('/recipients/{recipientId}', 'delete');
    const bulk = op('/recipients/bulk-delete', 'post');
    for (const o of [patch, del, bulk]) {
      expect(o.description).toContain('not_editable');
      expect(o.description).toMatch(/`active` or `completed`/);
      expect(o.responses['409'].description).toContain('not_editable');
    }
    expect(patch.description).toMatch(/empty body is 400/);
    expect(patch.description).toMatch(/immutable/);
    for (const field of ['campaignId', 'externalId', 'metadata', 'interactionCount']) {
      expect(patch.description).toContain(`\`${field}\``);
    }
    expect(patch.description).toMatch(/does not re-substitute/);
    expect(schema('patch').description).toMatch(/empty body is 400/);
    // DELETE has no body, so no Idempotency-Key refusals.
    expect(del.responses['409']['x-error-codes']).toEqual(['conflict']);
  });

  test('bulk delete states multiple_campaigns and what skippedCampaignIds and ids mean', () => {
    const bulk = op('/recipients/bulk-delete', 'post');
    expect(bulk.description).toContain('multiple_campaigns');
    expect(bulk.description).toMatch(/Ids not found in this project are skipped/);
    expect(bulk.description).toMatch(/`skippedCampaignIds` lists the campaigns whose recipients were kept/);
    expect(bulk.description).toMatch(/`ids` in the response lists the recipients really deleted/);
    expect(bulk.responses['400'].description).toContain('multiple_campaigns');
    const response = schema('bulk-delete-response').properties;
    expect(response.skippedCampaignIds.description).toMatch(/Only with `all: true`/);
    expect(response.ids.description).toMatch(/really deleted/);
  });
});
