import path from 'node:path';
import { credentials, type Server, ServerCredentials } from '@grpc/grpc-js';
import { GRPC_CHANNEL_OPTIONS, loadCampaignsProto, subjects } from '@outreach/contracts';
import {
  type Clock,
  connectNats,
  createLogger,
  createMetrics,
  createPool,
  ensureStreams,
  Lifecycle,
  type Logger,
  loadConfig,
  migrate,
  pruneAppliedPeriodically,
  publishJson,
  type RunningService,
  randomBase62,
  registerConsumerLag,
  registerPoolMetrics,
  serveMetrics,
  streamNames,
  systemClock,
  within,
} from '@outreach/platform';
import { buildGrpcServer } from './app';
import { campaignsDurable, consumeCampaignSnapshots } from './campaigns/campaign-consumer';
import { campaignLookup } from './campaigns/campaign-replicas';
import { CONFIG_SPEC } from './config';
import { createRecipientService } from './recipients/recipients.service';
import { loadSafetyRules } from './recipients/safety';
import {
  APPLIED_USAGE_TABLES,
  consumeUsage,
  usageBatchDurable,
  usageDurable,
  usageStartsDurable,
} from './usage/usage-consumer';

export { CONFIG_SPEC } from './config';

/** The folder of this service's SQL migrations (same relative place from src/ and dist/). */
export const MIGRATIONS_DIR = path.resolve(__dirname, '../migrations');
/** The PostgreSQL schema this service owns. */
export const SCHEMA = 'recipients';

/** Applies the service's migrations and returns their names (for scripts and deploy jobs). */
export async function runMigrations(env: NodeJS.ProcessEnv, logger?: Logger): Promise<string[]> {
  const config = loadConfig(CONFIG_SPEC, env);
  const log = logger ?? createLogger('recipient-service', config.LOG_LEVEL);
  const pool = createPool('recipient-service', config.DATABASE_URL, 1, log);
  try {
    return await migrate(pool, SCHEMA, MIGRATIONS_DIR, log);
  } finally {
    await pool.end();
  }
}

function bind(server: Server, address: string): Promise<number> {
  return new Promise((resolve, reject) =>
    server.bindAsync(address, ServerCredentials.createInsecure(), (err, port) =>
      err ? reject(err) : resolve(port),
    ),
  );
}

/**
 * Starts the recipient service: config, PostgreSQL (migrated), NATS streams, the two durable
 * consumers (campaign snapshots, usage) and the pruning of applied usage (at start, then
 * hourly), then the gRPC server. `stop()` shuts down in order: gRPC, consumers, NATS, pool,
 * metrics.
 */
export async function start(
  env: NodeJS.ProcessEnv,
  options: { logger?: Logger; clock?: Clock } = {},
): Promise<RunningService & { lifecycle: Lifecycle }> {
  const config = loadConfig(CONFIG_SPEC, env);
  const logger = options.logger ?? createLogger('recipient-service', config.LOG_LEVEL);
  const clock = options.clock ?? systemClock;
  const safetyRules = loadSafetyRules(config.SAFETY_RULES_FILE);
  const lifecycle = new Lifecycle(logger, config.SHUTDOWN_TIMEOUT_MS);
  const ports: Record<string, number> = {};
  try {
    const pool = createPool('recipient-service', config.DATABASE_URL, config.DATABASE_POOL_SIZE, logger);
    await migrate(pool, SCHEMA, MIGRATIONS_DIR, logger);
    const nc = await connectNats(config.NATS_URL, 'recipient-service', logger);
    const jsm = await nc.jetstreamManager();
    await ensureStreams(jsm, config.NATS_PREFIX);
    const js = nc.jetstream();
    const prefix = config.NATS_PREFIX;
    const CampaignService = loadCampaignsProto().outreach.v1.CampaignService;
    const campaignClient = new CampaignService(
      config.CAMPAIGN_SERVICE_ADDR,
      credentials.createInsecure(),
      GRPC_CHANNEL_OPTIONS,
    );
    const metrics = createMetrics('recipient-service');
    registerPoolMetrics(metrics.registry, pool);
    const streams = streamNames(prefix);
    registerConsumerLag(metrics.registry, jsm, [
      { stream: streams.state, consumer: campaignsDurable(prefix) },
      { stream: streams.events, consumer: usageDurable(prefix) },
      { stream: streams.events, consumer: usageBatchDurable(prefix) },
      { stream: streams.events, consumer: usageStartsDurable(prefix) },
    ]);

    const service = createRecipientService({
      pool,
      clock,
      logger,
      publicBaseUrl: config.PUBLIC_BASE_URL,
      safetyRules,
      lookupCampaign: campaignLookup(pool, campaignClient),
      publishChange: (event) =>
        publishJson(
          js,
          subjects(prefix).recipientChanged,
          event,
          `recipient-${event.change}-${event.recipientId}-${randomBase62(8)}`,
        ),
    });
    const server = buildGrpcServer({ service, pool, lifecycle, logger, metrics });
    const stopCampaigns = await consumeCampaignSnapshots({ pool, js, jsm, prefix, logger });
    const stopUsage = await consumeUsage({ pool, js, jsm, prefix, logger });
    const stopPruning = pruneAppliedPeriodically(
      { pool, logger, clock },
      APPLIED_USAGE_TABLES,
      config.USAGE_DEDUP_RETENTION_DAYS,
    );
    ports.grpc = await bind(server, `${config.HOST}:${config.RECIPIENT_GRPC_PORT}`);

    lifecycle.onShutdown('grpc', () =>
      within(
        new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
        config.SHUTDOWN_TIMEOUT_MS / 2,
      ).then(() => server.forceShutdown()),
    );
    lifecycle.onShutdown('consumers', () => Promise.all([stopCampaigns(), stopUsage(), stopPruning()]));
    lifecycle.onShutdown('campaign client', () => campaignClient.close());
    lifecycle.onShutdown('nats', () => nc.drain());
    lifecycle.onShutdown('postgres', () => pool.end());
    if (config.METRICS_PORT > 0) {
      const metricsServer = await serveMetrics(metrics.registry, config.METRICS_PORT, config.HOST);
      const address = metricsServer.address();
      ports.metrics = typeof address === 'object' && address ? address.port : config.METRICS_PORT;
      lifecycle.onShutdown('metrics', () => new Promise((resolve) => metricsServer.close(resolve)));
    }
    logger.info({ ports }, 'recipient service started');
  } catch (err) {
    await lifecycle.shutdown('start failed').catch(() => undefined);
    throw err;
  }
  return { name: 'recipient-service', ports, lifecycle, stop: () => lifecycle.shutdown('stop') };
}
