import { credentials } from '@grpc/grpc-js';
import { type CampaignSnapshot, loadRecipientsProto, type RecipientMessage } from '@outreach/contracts';
import { callUnary, type RunningService } from '@outreach/platform';
import { start as startRecipientService } from '@outreach/recipient-service';
import { Pool } from 'pg';
import { createTestNamespace, type TestNamespace } from '../../test/support/isolation';
import { start } from '../src/server';
import { activeCampaign, device, StatePublisher } from './support/fixtures';
import { post, waitFor } from './support/harness';

// The link runtime against the REAL recipient service: ResolveLink over gRPC, and UsageAdmitted
// consumed there so that interactionCount and lastInteractionAt follow within a second.
let ns: TestNamespace;
let recipients: RunningService;
let link: RunningService;
let publisher: StatePublisher;
let pool: Pool;
let client: InstanceType<ReturnType<typeof loadRecipientsProto>['outreach']['v1']['RecipientService']>;

beforeAll(async () => {
  ns = await createTestNamespace();
  recipients = await startRecipientService({
    ...ns.env,
    RECIPIENT_GRPC_PORT: '0',
    HOST: '127.0.0.1',
    CAMPAIGN_SERVICE_ADDR: '127.0.0.1:1',
  });
  link = await start({
    ...ns.env,
    LINK_PORT: '0',
    HOST: '127.0.0.1',
    RECIPIENT_SERVICE_ADDR: `127.0.0.1:${recipients.ports.grpc}`,
  });
  publisher = await StatePublisher.connect(ns.env.NATS_URL, ns.natsPrefix);
  pool = new Pool({ connectionString: ns.databaseUrl, max: 2 });
  client = new (loadRecipientsProto().outreach.v1.RecipientService)(
    `127.0.0.1:${recipients.ports.grpc}`,
    credentials.createInsecure(),
  );
}, 60_000);

afterAll(async () => {
  client?.close();
  await pool?.end();
  await publisher?.close();
  await link?.stop();
  await recipients?.stop();
  await ns?.cleanup();
});

it('admits through a recipient created in the recipient service and shows the usage there', async () => {
  const d = await publisher.device(device());
  const draft: CampaignSnapshot = await publisher.campaign(
    activeCampaign({ deviceId: d.id, launchedAt: null }),
  );
  await waitFor(async () => {
    const { rows } = await pool.query('SELECT 1 FROM recipients.campaign_replicas WHERE id = $1', [draft.id]);
    return rows.length > 0;
  }, 5000);
  const created = await callUnary<object, { results: { status: string; recipient: RecipientMessage }[] }>(
    client,
    'CreateRecipients',
    {
      projectId: draft.projectId,
      campaignId: draft.id,
      itemsJson: [JSON.stringify({ label: 'Bob', maxTotalInteractions: 2 })],
    },
  );
  expect(created.results[0].status).toBe('created');
  const r = created.results[0].recipient;
  const token = new URL(r.link).pathname.split('/').pop()!;
  const base = `http://127.0.0.1:${link.ports.http}`;

  await publisher.campaign({ ...draft, launchedAt: new Date().toISOString() });
  await waitFor(async () => (await fetch(`${base}/i/${token}`)).status === 200, 2000);

  const first = await post(`${base}/i/${token}/conversations`);
  expect(first.status).toBe(201);
  const get = () =>
    callUnary<object, RecipientMessage>(client, 'GetRecipient', {
      projectId: r.projectId,
      recipientId: r.id,
    });
  const took = await waitFor(async () => (await get()).interactionCount === 1, 2000);
  expect(took).toBeLessThan(1000);
  const { rows } = await pool.query('SELECT started_at FROM link.conversations WHERE id = $1', [
    first.body.conversationId,
  ]);
  expect((await get()).lastInteractionAt).toBe(rows[0].started_at.toISOString());

  expect((await post(`${base}/i/${token}/conversations`)).status).toBe(201);
  const third = await post(`${base}/i/${token}/conversations`);
  expect(third.status).toBe(403);
  expect(third.body.code).toBe('link_disabled');
  await waitFor(async () => (await get()).interactionCount === 2, 2000);
});
