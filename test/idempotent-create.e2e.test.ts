/**
 * A create that outlives the gateway's deadline: the client hears 503 (retryable) while the
 * create goes on and commits. Its retry under the same Idempotency-Key must get that create's
 * answer, not make the batch a second time.
 */
import { Client } from 'pg';
import { createProject, eventually, type ProjectFixture } from './support/fixtures';
import { http, startSystem, type TestSystem } from './support/system';

let sys: TestSystem;
let fx: ProjectFixture;
let db: Client;

beforeAll(async () => {
  sys = await startSystem({ GRPC_DEADLINE_MS: '500' });
  fx = await createProject(sys);
  db = new Client({ connectionString: sys.env.DATABASE_URL });
  await db.connect();
  // The recipient service writes only into a campaign whose replica has arrived.
  await eventually(
    async () =>
      (await db.query('SELECT 1 FROM recipients.campaign_replicas WHERE id = $1', [fx.campaignId]))
        .rowCount === 1,
    10_000,
  );
}, 60_000);
afterAll(async () => {
  await db?.end();
  await sys?.stop();
});

const create = (idempotencyKey: string, items: unknown[]) =>
  http('POST', `${sys.gatewayUrl}/api/v1/projects/${fx.projectId}/recipients`, {
    token: fx.keys.rw,
    body: { campaignId: fx.campaignId, items },
    headers: { 'idempotency-key': idempotencyKey },
  });
const listed = async () =>
  (
    await http(
      'GET',
      `${sys.gatewayUrl}/api/v1/projects/${fx.projectId}/recipients?campaignId=${fx.campaignId}&limit=200`,
      { token: fx.keys.rw },
    )
  ).body.recipients.map((r: { id: string }) => r.id) as string[];

it('answers the retry of a create that committed after its 503 with that create, not a second one', async () => {
  // Holds the campaign's replica row, which a create's transaction updates last: the create
  // waits past the gateway's deadline with its recipients inserted and its key claimed.
  const blocker = new Client({ connectionString: sys.env.DATABASE_URL });
  await blocker.connect();
  let first: Awaited<ReturnType<typeof create>>;
  try {
    await blocker.query('BEGIN');
    await blocker.query('SELECT 1 FROM recipients.campaign_replicas WHERE id = $1 FOR UPDATE', [
      fx.campaignId,
    ]);
    first = await create('retry-after-timeout', [{ label: 'No external id, so never a duplicate' }]);
    // A retry while the first is still running waits for it, and times out in turn.
    const early = await create('retry-after-timeout', [{ label: 'No external id, so never a duplicate' }]);
    expect([first.status, early.status]).toEqual([503, 503]);
    expect(first.body).toMatchObject({ code: 'unavailable', retryable: true });
  } finally {
    await blocker.query('ROLLBACK');
    await blocker.end();
  }
  const [id] = await eventually(async () => {
    const ids = await listed();
    return ids.length > 0 && ids;
  });

  const retry = await create('retry-after-timeout', [{ label: 'No external id, so never a duplicate' }]);
  expect(retry.status).toBe(201);
  expect(retry.headers.get('idempotent-replayed')).toBe('true');
  expect(retry.body).toMatchObject({ created: 1, results: [{ status: 'created', id }] });
  expect(await listed()).toEqual([id]);

  // The same key for another request is refused, as while the gateway still held it.
  const other = await create('retry-after-timeout', [{ label: 'Someone else' }]);
  expect(other.status).toBe(422);
  expect(other.body.code).toBe('idempotency_key_reused');
  expect(await listed()).toEqual([id]);
});
