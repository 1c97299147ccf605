import path from 'node:path';
import { type CampaignSnapshot, loadCampaignsProto, loadHealthProto, subjects } from '@outreach/contracts';
import {
  type Clock,
  closeGrpcServer,
  createLogger,
  createMetrics,
  createPool,
  grpcHealthCheck,
  grpcServerTlsOf,
  internalClient,
  internalTokensOf,
  Lifecycle,
  type Logger,
  loadConfig,
  migrate,
  monitorDependencies,
  natsCheck,
  Opened,
  OutboxRelay,
  openInternalCaller,
  openJetStream,
  openMetrics,
  postgresCheck,
  pruneAppliedPeriodically,
  type RunningService,
  registerConsumerLag,
  registerDependencyMetrics,
  registerPoolMetrics,
  runOnDemand,
  serveGrpc,
  streamNames,
  systemClock,
} from '@outreach/platform';
import { Counter } from 'prom-client';
import { buildGrpcServer } from './app';
import { campaignsDurable, consumeCampaignSnapshots } from './campaigns/campaign-consumer';
import { campaignAuthority, campaignLookup } from './campaigns/campaign-replicas';
import { CONFIG_SPEC } from './config';
import { IDEMPOTENT_CREATES_RETENTION_DAYS, IDEMPOTENT_CREATES_TABLE } from './recipients/idempotent-creates';
import { createRecipientService, RECIPIENT_OUTBOX } from './recipients/recipients.service';
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
// How often the outbox relay looks for changes a kick missed (a crash, NATS down).
const OUTBOX_SWEEP_MS = 1000;
// How often it looks for a deleted campaign's recipients that no tombstone's kick took (a crash
// midway, a tombstone applied by another instance that stopped).
const ERASE_EVERY_MS = 60_000;

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

/**
 * Starts the recipient service: config, PostgreSQL (migrated), NATS streams, the two durable
 * consumers (campaign snapshots, usage), the deletion of deleted campaigns' recipients and the
 * pruning of applied usage (at start, then hourly), then the gRPC server. `stop()` closes them
 * newest first: gRPC, consumers, metrics, NATS, pool.
 */
export async function start(
  env: NodeJS.ProcessEnv,
  options: { logger?: Logger; clock?: Clock; eraseChunk?: number } = {},
): Promise<RunningService & { lifecycle: Lifecycle }> {
  const config = loadConfig(CONFIG_SPEC, env);
  const logger = options.logger ?? createLogger('recipient-service', config.LOG_LEVEL);
  const { token: internalToken, alsoAccepted: internalTokenAlsoAccepted } = internalTokensOf(config);
  const serverTls = grpcServerTlsOf(config);
  const clock = options.clock ?? systemClock;
  const safetyRules = loadSafetyRules(config.SAFETY_RULES_FILE);
  const lifecycle = new Lifecycle(logger, config.SHUTDOWN_TIMEOUT_MS);
  const ports: Record<string, number> = {};
  const opened = new Opened();
  const metrics = createMetrics('recipient-service');
  try {
    const caller = openInternalCaller(opened, config, internalToken, logger, metrics.registry);
    const pool = opened.add(
      'postgres',
      createPool('recipient-service', config.DATABASE_URL, config.DATABASE_POOL_SIZE, logger),
      (p) => p.end(),
    );
    await migrate(pool, SCHEMA, MIGRATIONS_DIR, logger);
    const { nc, jsm, js } = await openJetStream(opened, config, 'recipient-service', logger);
    const prefix = config.NATS_PREFIX;
    const CampaignService = loadCampaignsProto().outreach.v1.CampaignService;
    const campaignClient = opened.add(
      'campaign client',
      internalClient(CampaignService, config.CAMPAIGN_SERVICE_ADDR, caller),
      (c) => c.close(),
    );
    // Writes ask the campaign service whether their campaign is still editable, and go by the
    // replicas while it is out of reach: the gauge shows when they do.
    const campaignHealth = opened.add(
      'campaign health client',
      internalClient(loadHealthProto().grpc.health.v1.Health, config.CAMPAIGN_SERVICE_ADDR, caller, {}),
      (c) => c.close(),
    );
    registerPoolMetrics(metrics.registry, pool);
    registerDependencyMetrics(
      metrics.registry,
      monitorDependencies({
        postgres: postgresCheck(pool),
        nats: natsCheck(nc),
        campaignService: grpcHealthCheck(campaignHealth),
      }),
    );
    const streams = streamNames(prefix);
    registerConsumerLag(metrics.registry, jsm, [
      { stream: streams.state, consumer: campaignsDurable(prefix) },
      { stream: streams.events, consumer: usageDurable(prefix) },
      { stream: streams.events, consumer: usageBatchDurable(prefix) },
      { stream: streams.events, consumer: usageStartsDurable(prefix) },
    ]);
    // Its probes over HTTP too, for a gRPC port that speaks TLS: started once serving gRPC.
    let serving = false;
    const metricsPort = await openMetrics(opened, metrics.registry, config.METRICS_PORT, config.HOST, {
      lifecycle,
      started: () => serving,
    });
    if (metricsPort) ports.metrics = metricsPort;
    // Stopped after the gRPC server: what its last requests committed is still published.
    const relay = opened.add(
      'outbox relay',
      new OutboxRelay(RECIPIENT_OUTBOX, pool, js, logger, OUTBOX_SWEEP_MS),
      (r) => r.stop(),
    );
    relay.start();

    const service = createRecipientService({
      pool,
      clock,
      logger,
      publicBaseUrl: config.PUBLIC_BASE_URL,
      safetyRules,
      lookupCampaign: campaignLookup(pool, campaignClient),
      campaignAuthority: campaignAuthority(
        campaignClient,
        logger,
        new Counter({
          name: 'recipient_writes_by_replicas_total',
          help: 'Recipient writes judged by the campaign replicas alone, because the campaign service was out of reach',
          registers: [metrics.registry],
        }),
      ),
      changes: { subject: subjects(prefix).recipientChanged, relay },
      eraseChunk: options.eraseChunk,
    });
    const eraser = runOnDemand(
      service.eraseDeletedCampaigns,
      ERASE_EVERY_MS,
      logger,
      "deleting a deleted campaign's recipients failed",
    );
    opened.addStop('deleted campaigns', eraser.stop);
    const applySnapshot = async (snapshot: CampaignSnapshot) => {
      await service.applyCampaignSnapshot(snapshot);
      if (snapshot.deletedAt) eraser.kick();
    };
    opened.addStop(
      'campaign snapshots',
      await consumeCampaignSnapshots({ apply: applySnapshot, js, jsm, prefix, logger }),
    );
    opened.addStop('usage consumer', await consumeUsage({ pool, js, jsm, prefix, logger }));
    opened.addStop(
      'applied-usage pruning',
      pruneAppliedPeriodically(
        { pool, logger, clock },
        APPLIED_USAGE_TABLES,
        config.USAGE_DEDUP_RETENTION_DAYS,
      ),
    );
    opened.addStop(
      'idempotent-create pruning',
      // Kept a day longer than the gateway replays a key, so no retry outlives its record.
      pruneAppliedPeriodically(
        { pool, logger, clock, what: 'idempotent creates' },
        [IDEMPOTENT_CREATES_TABLE],
        IDEMPOTENT_CREATES_RETENTION_DAYS,
      ),
    );
    const server = opened.add(
      'grpc',
      buildGrpcServer({
        service,
        pool,
        lifecycle,
        logger,
        metrics,
        internalToken,
        internalTokenMode: config.INTERNAL_TOKEN_MODE,
        internalTokenAlsoAccepted,
        clientNames: serverTls?.clientNames,
      }),
      (grpc) => closeGrpcServer(grpc, config.SHUTDOWN_TIMEOUT_MS / 2),
    );
    ports.grpc = await serveGrpc(server, {
      host: config.HOST,
      port: config.RECIPIENT_GRPC_PORT,
      tls: serverTls,
      registry: metrics.registry,
      logger,
    });
    serving = true;

    // gRPC stops accepting and drains first, then the consumers, NATS and the pool.
    opened.handTo(lifecycle);
    logger.info({ ports }, 'recipient service started');
  } catch (err) {
    await opened.closeAfterFailedStart(logger);
    throw err;
  }
  return { name: 'recipient-service', ports, lifecycle, stop: () => lifecycle.shutdown('stop') };
}
