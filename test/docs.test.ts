/**
 * The operator's docs name what the code reads: every environment variable a service reads is
 * documented in docs/operations.md, and every variable the docs name is one a service reads (or
 * one of the OpenTelemetry SDK's and Node's own). The metrics side is checked against the real
 * services' /metrics in metrics.e2e.test.ts.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CONFIG_SPEC as campaignService } from '@outreach/campaign-service/config';
import { CONFIG_SPEC as gateway } from '@outreach/gateway/config';
import { CONFIG_SPEC as linkRuntime } from '@outreach/link-runtime/config';
import { CONFIG_SPEC as recipientService } from '@outreach/recipient-service/config';
import { Client } from 'pg';

const root = path.join(__dirname, '..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

const SPECS = {
  gateway,
  'recipient-service': recipientService,
  'link-runtime': linkRuntime,
  'campaign-service': campaignService,
};
const READ = new Set(Object.values(SPECS).flatMap((spec) => Object.keys(spec)));

// Names in capitals the docs quote that are no variable of ours: the OpenTelemetry SDK's own
// variables, Node's, gRPC health and status names, and constants a README explains.
const NOT_OURS =
  /^(OTEL_[A-Z_]+|NODE_OPTIONS|NODE_EXTRA_CA_CERTS|NOT_SERVING|NOT_FOUND|COMMON_CONFIG|MAX_[A-Z_]+_LOOKUPS)$/;

/**
 * Every backticked name that looks like an environment variable (`NAME_PART` or `NAME_PART=value`;
 * single words such as `HOST` are left out, as `GET` or `POST` would be taken for variables).
 */
function quotedVariables(text: string): Set<string> {
  return new Set([...text.matchAll(/`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?:=[^`]*)?`/g)].map((m) => m[1]));
}

describe('configuration docs', () => {
  it.each(Object.entries(SPECS))('docs/operations.md documents every variable %s reads', (_service, spec) => {
    const docs = read('docs/operations.md');
    const documented = (name: string) => docs.includes(`\`${name}\``) || docs.includes(`\`${name}=`);
    expect(Object.keys(spec).filter((name) => !documented(name))).toEqual([]);
  });

  it.each([
    'docs/operations.md',
    'docs/architecture.md',
    'docs/api.md',
    'README.md',
    'link-runtime/README.md',
    'recipient-service/README.md',
    'campaign-service/README.md',
  ])('%s names only variables a service reads', (file) => {
    const unknown = [...quotedVariables(read(file))].filter(
      (name) => !READ.has(name) && !NOT_OURS.test(name),
    );
    expect(unknown).toEqual([]);
  });
});

/** The TLS options node-postgres (the services' and the migration Job's driver) takes from a URL. */
function sslOf(url: string): unknown {
  return (new Client({ connectionString: url }) as unknown as { connectionParameters: { ssl: unknown } })
    .connectionParameters.ssl;
}

describe('PostgreSQL TLS in the docs', () => {
  // docs/operations.md (*TLS to PostgreSQL*) describes the installed pg: when an upgrade changes
  // what these URLs mean (pg 9 is announced to adopt libpq's), this fails and the text needs a look.
  it('node-postgres verifies the server for sslmode=require, and only encrypts with uselibpqcompat=true', () => {
    const verifyFull = sslOf('postgres://db.example.com/outreach?sslmode=verify-full');
    expect(verifyFull).toEqual({});
    for (const mode of ['prefer', 'require', 'verify-ca'])
      expect(sslOf(`postgres://db.example.com/outreach?sslmode=${mode}`)).toEqual(verifyFull);
    expect(sslOf('postgres://db.example.com/outreach?uselibpqcompat=true&sslmode=require')).toEqual({
      rejectUnauthorized: false,
    });
  });

  it.each(['docs/operations.md', 'deploy/helm/outreach/values-external.yaml', 'README.md'])(
    '%s shows no sslmode that node-postgres reads otherwise than libpq does',
    (file) => {
      const urls = [...read(file).matchAll(/postgres(?:ql)?:\/\/[^\s'"`]+/g)].map((m) => m[0]);
      const misread = urls.filter(
        (url) =>
          /[?&]sslmode=(prefer|require|verify-ca)\b/.test(url) && !/[?&]uselibpqcompat=true\b/.test(url),
      );
      expect(misread).toEqual([]);
    },
  );
});
