/**
 * NATS that comes back without its JetStream files: the state stream, from which link runtimes
 * learn campaigns and devices, is created again empty, and the campaign service publishes every
 * snapshot into it again, so a link runtime started afterwards serves the links of campaigns
 * that did not change since.
 */
import { subjects } from '@outreach/contracts';
import { ensureStreams, type RunningService, streamNames } from '@outreach/platform';
import { connect } from 'nats';
import { admin, createProject, eventually } from './support/fixtures';
import { freePort, http, startSystem, type TestSystem } from './support/system';

let sys: TestSystem;
let late: RunningService | undefined;
beforeAll(async () => {
  sys = await startSystem({ STATE_STREAM_CHECK_MS: '200' });
});
afterAll(async () => {
  await late?.stop();
  await sys?.stop();
});

it('serves existing campaigns from a link runtime started after the state stream was lost', async () => {
  const fx = await createProject(sys, { startDate: new Date(Date.now() + 500).toISOString() });
  const campaign = `/projects/${fx.projectId}/campaigns/${fx.campaignId}`;
  await admin(sys, 'POST', `${campaign}/launch`);
  const created = await http('POST', `${sys.gatewayUrl}/api/v1/projects/${fx.projectId}/recipients`, {
    token: fx.keys.rw,
    body: { campaignId: fx.campaignId, items: [{ label: 'a' }] },
  });
  expect(created.status).toBe(201);
  const link = new URL(created.body.results[0].link);
  await eventually(async () => (await http('GET', link.href)).status === 200, 10_000);

  // As when NATS comes back without its files and a stream keeper creates the stream again.
  const nc = await connect({ servers: sys.ns.env.NATS_URL });
  try {
    const jsm = await nc.jetstreamManager();
    const stream = streamNames(sys.ns.natsPrefix).state;
    await jsm.streams.delete(stream);
    await ensureStreams(jsm, sys.ns.natsPrefix);
    const subject = subjects(sys.ns.natsPrefix).campaignState(fx.campaignId);
    await eventually(() => jsm.streams.getMessage(stream, { last_by_subj: subject }), 5000);
  } finally {
    await nc.close();
  }

  const port = await freePort();
  late = await require('@outreach/link-runtime').start({ ...sys.env, LINK_PORT: String(port) });
  link.port = String(port);
  expect((await http('GET', link.href)).status).toBe(200);
  expect((await http('POST', `${link.href}/conversations`)).status).toBe(201);
});
