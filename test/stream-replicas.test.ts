import { type RunningService, streamNames } from '@outreach/platform';
import { connect } from 'nats';
import { createTestNamespace, TEST_SERVERS, type TestNamespace } from './support/isolation';
import { freePort } from './support/system';

type Start = (env: NodeJS.ProcessEnv) => Promise<RunningService>;

// Every service creates the streams at start, so each must create them with NATS_STREAM_REPLICAS.
// The test NATS is a single server: it creates streams of one replica, and refuses more, which is
// how a larger setting shows that it reached JetStream. Streams of three need a NATS cluster.
const SERVICES = ['gateway', 'link-runtime', 'campaign-service', 'recipient-service'];

async function envFor(ns: TestNamespace, replicas: string): Promise<Record<string, string>> {
  const env: Record<string, string> = {
    ...ns.env,
    HOST: '127.0.0.1',
    ADMIN_TOKEN: 'test-admin-token',
    NATS_STREAM_REPLICAS: replicas,
  };
  for (const v of [
    'GATEWAY_PORT',
    'LINK_PORT',
    'DASHBOARD_PORT',
    'CAMPAIGN_GRPC_PORT',
    'RECIPIENT_GRPC_PORT',
  ])
    env[v] = '0';
  // The gRPC clients connect lazily: nothing needs to answer at these addresses.
  env.CAMPAIGN_SERVICE_ADDR = `127.0.0.1:${await freePort()}`;
  env.RECIPIENT_SERVICE_ADDR = `127.0.0.1:${await freePort()}`;
  return env;
}

async function streamReplicas(prefix: string): Promise<Array<number | undefined>> {
  const nc = await connect({ servers: TEST_SERVERS.nats });
  try {
    const jsm = await nc.jetstreamManager();
    return await Promise.all(
      Object.values(streamNames(prefix)).map(
        async (name) => (await jsm.streams.info(name)).config.num_replicas,
      ),
    );
  } finally {
    await nc.close();
  }
}

describe.each(SERVICES)('%s', (name) => {
  const { start } = require(`@outreach/${name}`) as { start: Start };
  let ns: TestNamespace;
  beforeEach(async () => {
    ns = await createTestNamespace();
  });
  afterEach(() => ns.cleanup());

  it('creates the streams with NATS_STREAM_REPLICAS=1', async () => {
    const running = await start(await envFor(ns, '1'));
    try {
      expect(await streamReplicas(ns.natsPrefix)).toEqual([1, 1]);
    } finally {
      await running.stop();
    }
  });

  it('asks JetStream for NATS_STREAM_REPLICAS=3, which a single server refuses', async () => {
    let running: RunningService | undefined;
    const outcome = await start(await envFor(ns, '3')).then(
      (s) => {
        running = s;
        return 'started';
      },
      (err: Error) => err.message,
    );
    await running?.stop();
    expect(outcome).toMatch(/replicas/i);
  });
});
