import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ERROR_CATALOGUE } from '@outreach/platform';

const doc = readFileSync(path.resolve(__dirname, '../../docs/api.md'), 'utf8');

test.each(Object.entries(ERROR_CATALOGUE))('docs/api.md documents `%s` with its status', (code, spec) => {
  // A row of the error-code table: | `code` | status | retryable | meaning |
  const row = doc.split('\n').find((line) => line.startsWith(`| \`${code}\` |`));
  expect(row).toBeDefined();
  const cells = (row as string).split('|').map((c) => c.trim());
  expect(cells[2]).toBe(String(spec.httpStatus));
  expect(cells[3]).toBe(spec.retryable ? 'yes' : 'no');
});

test('docs/api.md documents every rate-limit header the gateway sends', () => {
  for (const h of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-RateLimit-Used']) {
    expect(doc).toContain(`\`${h}\``);
  }
  expect(doc).toContain('`RateLimit-Policy`');
  expect(doc).toContain('`Idempotent-Replayed: true`');
});
