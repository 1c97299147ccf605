import { ensureStreams, streamNames } from '@outreach/platform';
import { connect } from 'nats';
import { type Harness, post, startHarness, waitFor } from './support/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.close());

it('follows campaign changes again after NATS lost the state stream and it was created again', async () => {
  const l = await h.link();
  expect((await post(`${h.base}/i/${l.token}/conversations`)).status).toBe(201);

  // As when NATS comes back without its files; the services' stream keeper then creates it again.
  const nc = await connect({ servers: h.ns.env.NATS_URL });
  try {
    const jsm = await nc.jetstreamManager();
    await jsm.streams.delete(streamNames(h.ns.natsPrefix).state);
    await ensureStreams(jsm, h.ns.natsPrefix);
  } finally {
    await nc.close();
  }

  await h.publisher.campaign({ ...l.campaign, haltedAt: new Date().toISOString() });
  // A follower JetStream did not tell of the loss learns of it from missed heartbeats, in about 5 s.
  await waitFor(async () => {
    const r = await post(`${h.base}/i/${l.token}/conversations`);
    return r.status === 503 && r.body.details?.reason === 'campaign_not_active';
  }, 15_000);
});
