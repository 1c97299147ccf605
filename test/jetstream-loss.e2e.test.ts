/**
 * NATS that comes back without its JetStream files: its streams are created again empty. The
 * campaign service publishes every snapshot into the state stream again, so a link runtime started
 * afterwards serves the links of campaigns that did not change since; the link runtime publishes
 * the usage batches it kept into the events stream again, so usage whose events were lost before
 * the consumers applied them is counted all the same; and every consumer follows the new streams.
 */
import { subjects } from '@outreach/contracts';
import { ensureStreams, type RunningService, streamNames } from '@outreach/platform';
import { connect, type JetStreamManager } from 'nats';
import { Client } from 'pg';
import { admin, createProject, eventually, type ProjectFixture } from './support/fixtures';
import { type PrivateStore, startPrivateStore } from './support/private-store';
import { freePort, http, startSystem, type TestSystem } from './support/system';

// Quick checks, so that a loss is repaired within the test's patience.
const QUICK = { STATE_STREAM_CHECK_MS: '200', USAGE_REPUBLISH_MS: '200' };

/** Runs `use` with a JetStream manager of the system's NATS. */
async function withJetStream<T>(sys: TestSystem, use: (jsm: JetStreamManager) => Promise<T>): Promise<T> {
  const nc = await connect({ servers: sys.env.NATS_URL });
  try {
    return await use(await nc.jetstreamManager());
  } finally {
    await nc.close();
  }
}

/** As when NATS comes back without its files and a stream keeper creates the stream again. */
async function loseStream(sys: TestSystem, which: 'state' | 'events'): Promise<void> {
  await withJetStream(sys, async (jsm) => {
    await jsm.streams.delete(streamNames(sys.ns.natsPrefix)[which]);
    await ensureStreams(jsm, sys.ns.natsPrefix);
  });
}

/**
 * A launched campaign that runs from in three seconds, and one recipient's link, open. The
 * recipient is created while the campaign is a draft: a slow machine may reach the start
 * before the launch, and a running campaign takes no more recipients.
 */
async function openLink(sys: TestSystem) {
  const fx = await createProject(sys, { startDate: new Date(Date.now() + 3000).toISOString() });
  const path = `/projects/${fx.projectId}/campaigns/${fx.campaignId}`;
  const created = await http('POST', `${sys.gatewayUrl}/api/v1/projects/${fx.projectId}/recipients`, {
    token: fx.keys.rw,
    body: { campaignId: fx.campaignId, items: [{ label: 'a' }] },
  });
  expect(created.status).toBe(201);
  await admin(sys, 'POST', `${path}/launch`);
  const link = new URL(created.body.results[0].link);
  await eventually(async () => {
    // Thrown, so that a timeout says what the page answered last.
    const page = await http('GET', link.href);
    if (page.status !== 200) throw new Error(`page answered ${page.status}`);
    return true;
  }, 10_000);
  return { fx, path, link, recipientId: created.body.results[0].id as string };
}

/** Waits until the API shows `n` conversations as the campaign's allowance.used and the recipient's interactionCount. */
async function expectUsage(
  sys: TestSystem,
  { fx, path, recipientId }: { fx: ProjectFixture; path: string; recipientId: string },
  n: number,
  timeoutMs: number,
): Promise<void> {
  const shown = await eventually(async () => {
    const [campaign, recipient] = await Promise.all([
      admin(sys, 'GET', path),
      http('GET', `${sys.gatewayUrl}/api/v1/projects/${fx.projectId}/recipients/${recipientId}`, {
        token: fx.keys.read,
      }),
    ]);
    const used = campaign.allowance.used;
    const count = recipient.body.interactionCount;
    // Thrown, so that a timeout says what was shown last.
    if (used !== n || count !== n) throw new Error(`allowance.used ${used}, interactionCount ${count}`);
    return { used, count };
  }, timeoutMs);
  expect(shown).toEqual({ used: n, count: n });
}

describe('a stream deleted and created again', () => {
  let sys: TestSystem;
  let late: RunningService | undefined;
  beforeAll(async () => {
    sys = await startSystem(QUICK);
  });
  afterAll(async () => {
    await late?.stop();
    await sys?.stop();
  });

  it('serves existing campaigns from a link runtime started after the state stream was lost', async () => {
    const { fx, link } = await openLink(sys);
    await loseStream(sys, 'state');
    const stream = streamNames(sys.ns.natsPrefix).state;
    const subject = subjects(sys.ns.natsPrefix).campaignState(fx.campaignId);
    await withJetStream(sys, (jsm) =>
      eventually(() => jsm.streams.getMessage(stream, { last_by_subj: subject }), 5000),
    );

    const port = await freePort();
    late = await require('@outreach/link-runtime').start({ ...sys.env, LINK_PORT: String(port) });
    link.port = String(port);
    expect((await http('GET', link.href)).status).toBe(200);
    expect((await http('POST', `${link.href}/conversations`)).status).toBe(201);
  });

  it('counts usage whose events were lost with the events stream before anyone applied them', async () => {
    const opened = await openLink(sys);
    await admin(sys, 'POST', `${opened.path}/top-offs`, { conversations: 10 });
    // The services that apply usage are stopped, so its events wait in JetStream unapplied.
    const [campaigns, recipients] = sys.services;
    await campaigns.stop();
    await recipients.stop();
    for (let i = 0; i < 2; i++)
      expect((await http('POST', `${opened.link.href}/conversations`)).status).toBe(201);
    const db = new Client({ connectionString: sys.ns.databaseUrl });
    await db.connect();
    try {
      // Written, announced and confirmed by JetStream.
      await eventually(async () => {
        const { rows } = await db.query<{ waiting: number; confirmed: number }>(
          `SELECT count(*) FILTER (WHERE confirmed_at IS NULL)::int AS waiting,
                  count(*) FILTER (WHERE confirmed_at IS NOT NULL)::int AS confirmed FROM link.usage_batches`,
        );
        return rows[0].waiting === 0 && rows[0].confirmed > 0;
      }, 5000);
    } finally {
      await db.end();
    }
    await loseStream(sys, 'events');

    for (const name of ['campaign-service', 'recipient-service'])
      sys.services.push(await require(`@outreach/${name}`).start(sys.env));
    await expectUsage(sys, opened, 2, 10_000);
  }, 60_000);
});

describe('NATS back without its files', () => {
  let nats: PrivateStore;
  let sys: TestSystem;
  beforeAll(async () => {
    nats = await startPrivateStore('nats');
    sys = await startSystem({ NATS_URL: nats.url, ...QUICK });
  });
  afterAll(async () => {
    await nats?.up();
    await sys?.stop();
    await nats?.remove();
  });

  it('follows campaign changes and counts usage again once the streams are created anew', async () => {
    const opened = await openLink(sys);
    const { path, link } = opened;
    // More state messages than the new stream will hold before the halt below, so that a
    // follower resuming after its last sequence number would skip them all.
    for (let i = 0; i < 20; i++) await admin(sys, 'POST', `${path}/top-offs`, { conversations: 1 });
    expect((await http('POST', `${link.href}/conversations`)).status).toBe(201);
    await eventually(async () => (await admin(sys, 'GET', path)).allowance.used === 1, 5000);

    await nats.restartEmpty();
    // The services' stream keepers create the streams within 30 s; here at once.
    await withJetStream(sys, (jsm) => ensureStreams(jsm, sys.ns.natsPrefix));
    expect((await http('POST', `${link.href}/conversations`)).status).toBe(201);
    await admin(sys, 'POST', `${path}/halt`);
    // The page consumes nothing: it shows the halt once the link runtime has it.
    await eventually(async () => {
      const res = await http('GET', link.href);
      if (res.status !== 503) throw new Error(`page answered ${res.status}`);
      return true;
    }, 10_000);
    // Both starts counted, the first once only, though its event was replayed.
    await expectUsage(sys, opened, 2, 15_000);
  }, 90_000);
});
