import type { ApiKeySnapshot } from '@outreach/contracts';
import { subjects } from '@outreach/contracts';
import { connect, JSONCodec } from 'nats';
import { TEST_SERVERS } from '../../test/support/isolation';
import { untilRefused } from '../../test/support/revocation';
import { type Harness, startHarness } from './support/harness';

const path = '/api/v1/projects/prj_a/campaigns';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a revocation is effective within 1 s even without any event (grant cache lifetime)', async () => {
  const h = await startHarness();
  try {
    const { key, keyId } = h.backends.data.addKey('prj_a', ['recipients:read']);
    expect((await h.request('GET', path, { key })).status).toBe(200);
    // Cached now: the backend is not asked again within the lifetime.
    const verifies = h.backends.data.calls.filter((c) => c === 'VerifyApiKey').length;
    expect((await h.request('GET', path, { key })).status).toBe(200);
    expect(h.backends.data.calls.filter((c) => c === 'VerifyApiKey').length).toBe(verifies);
    h.backends.data.revoke(keyId);
    const refused = await untilRefused(
      async () => (await h.request('GET', path, { key })).status,
      Date.now(),
    );
    expect(refused.status).toBe(401);
    expect(refused.lastAdmittedMs).toBeLessThan(1000);
  } finally {
    await h.stop();
  }
});

test('a revoked-key snapshot on the state stream drops the cached grant at once', async () => {
  let h: Harness | undefined;
  const nc = await connect({ servers: TEST_SERVERS.nats });
  try {
    // A one-minute cache lifetime: only the event can explain a prompt refusal.
    h = await startHarness({ grantTtlMs: 60_000 });
    const { key, keyId } = h.backends.data.addKey('prj_a', ['recipients:read']);
    expect((await h.request('GET', path, { key })).status).toBe(200);
    h.backends.data.revoke(keyId);
    expect((await h.request('GET', path, { key })).status).toBe(200);
    const snapshot: ApiKeySnapshot = { id: keyId, projectId: 'prj_a', revoked: true, version: 2 };
    const js = nc.jetstream();
    await js.publish(subjects(h.ns.natsPrefix).apiKeyState(keyId), JSONCodec().encode(snapshot));
    const sent = Date.now();
    let status = 200;
    // Judged by when the refused request was sent, not answered.
    let refusedSentAt = sent;
    while (status === 200 && Date.now() - sent < 3000) {
      refusedSentAt = Date.now();
      status = (await h.request('GET', path, { key })).status;
      if (status === 200) await sleep(20);
    }
    expect(status).toBe(401);
    expect(refusedSentAt - sent).toBeLessThan(1000);
  } finally {
    await nc.close();
    await h?.stop();
  }
});
