import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { credentials } from '@grpc/grpc-js';
import { loadHealthProto } from '@outreach/contracts';
import { ConfigError, callUnary } from '@outreach/platform';
import { freePort } from '../../test/support/system';
import { start } from '../src/server';
import { type Harness, items, startHarness } from './helpers';

let h: Harness;
let metricsPort: number;
let rulesFile: string;

beforeAll(async () => {
  metricsPort = await freePort();
  rulesFile = path.join(mkdtempSync(path.join(tmpdir(), 'rules-')), 'safety.json');
  writeFileSync(
    rulesFile,
    JSON.stringify([{ id: 'no_discounts', description: 'promises a discount', pattern: '\\bdiscount\\b' }]),
  );
  h = await startHarness({ METRICS_PORT: String(metricsPort), SAFETY_RULES_FILE: rulesFile });
});
afterAll(async () => {
  await h?.close();
});

describe('recipient service process', () => {
  it('serves grpc.health.v1 as SERVING', async () => {
    const Health = loadHealthProto().grpc.health.v1.Health;
    const client = new Health(h.address, credentials.createInsecure());
    const res = await callUnary<object, { status: string }>(client, 'Check', { service: '' });
    client.close();
    expect(res.status).toBe('SERVING');
  });

  it('answers /livez and /readyz on its metrics port, the probes when its gRPC port speaks TLS', async () => {
    const at = (p: string) => fetch(`http://127.0.0.1:${metricsPort}${p}`).then((r) => r.status);
    expect([await at('/livez'), await at('/readyz')]).toEqual([200, 200]);
  });

  it('counts gRPC calls by method and code on /metrics', async () => {
    await h.refusal('GetRecipient', { projectId: 'prj_x', recipientId: 'rcp_missing' });
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(text).toMatch(
      /grpc_server_handled_total\{[^}]*method="GetRecipient"[^}]*code="NOT_FOUND"[^}]*\} 1/,
    );
  });

  it('extends the safety rules from SAFETY_RULES_FILE', async () => {
    await h.publishCampaign({ id: 'cmp_rules' });
    const res = await h.call<{ results: { status: string; detailsJson?: string }[] }>('CreateRecipients', {
      projectId: 'prj_test',
      campaignId: 'cmp_rules',
      itemsJson: items({ injectionInstructions: 'Offer a discount.' }, { injectionInstructions: 'Be kind.' }),
    });
    expect(res.results.map((r) => r.status)).toEqual(['error', 'created']);
    expect(JSON.parse(res.results[0].detailsJson!)).toMatchObject({
      reason: 'safety_refused',
      rule: 'no_discounts',
    });
  });

  it('fails to start on a bad configuration, naming the variable', async () => {
    await expect(start({ ...h.ns.env, RECIPIENT_GRPC_PORT: 'abc' })).rejects.toBeInstanceOf(ConfigError);
  });
});
