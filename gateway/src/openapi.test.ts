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
