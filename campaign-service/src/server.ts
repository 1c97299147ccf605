import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { GRPC_CHANNEL_OPTIONS } from '@outreach/contracts';
import {
  addGrpcHealth,
  type Clock,
  ConfigError,
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
  type RunningService,
  randomBase62,
  registerConsumerLag,
  registerPoolMetrics,
  serveMetrics,
  streamNames,
  systemClock,
} from '@outreach/platform';
import type { Pool } from 'pg';
import { buildHttpApp } from './app';
import { registerBudgetMetrics } from './campaigns/budget.metrics';
import { CONFIG_SPEC } from './config';
import type { CampaignDeps } from './deps';
import { OutboxRelay } from './events/outbox';
import { addCampaignService } from './grpc/campaign.grpc';
import { createRecipientClient, recipientsForwarder } from './recipients/recipients.client';
import { LifecycleScheduler } from './scheduler/lifecycle.scheduler';
import { APPLIED_USAGE_TABLES, consumeUsage, durableName } from './usage/usage.consumer';

/** The PostgreSQL schema this service owns. */
export const SCHEMA = 'campaigns';
const MIGRATIONS_DIR = path.resolve(__dirname, '../migrations');

/** Options of `start`; tests inject a clock and a logger. */
export interface StartOptions {
  logger?: Logger;
  clock?: Clock;
}

/** A pool whose connections use the service's schema. */
function schemaPool(url: string, size: number, logger: Logger): Pool {
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${SCHEMA}`);
  return createPool('campaign-service', u.toString(), size, logger);
}

/** Applies the service's migrations and returns their names. */
export async function runMigrations(env: NodeJS.ProcessEnv): Promise<string[]> {
  const config = loadConfig(CONFIG_SPEC, env);
  const logger = createLogger('campaign-service', config.LOG_LEVEL);
  const pool = createPool('campaign-service', config.DATABASE_URL, 1, logger);
  try {
    return await migrate(pool, SCHEMA, MIGRATIONS_DIR, logger);
  } finally {
    await pool.end();
  }
}

/**
 * Starts the campaign service: admin HTTP API, gRPC CampaignService with health, the
 * outbox relay, the usage consumer and the lifecycle scheduler. Port 0 picks free ports.
 */
export async function start(env: NodeJS.ProcessEnv, options: StartOptions = {}): Promise<RunningService> {
  const config = loadConfig(CONFIG_SPEC, env);
  const logger = options.logger ?? createLogger('campaign-service', config.LOG_LEVEL);
  let adminToken = config.ADMIN_TOKEN;
  if (!adminToken) {
    if (config.NODE_ENV === 'production') throw new ConfigError(['ADMIN_TOKEN is required in production']);
    adminToken = randomBase62(32);
    // Logged as message text on purpose: the redaction rules would hide a `token` field.
    logger.warn(`ADMIN_TOKEN is not set; this run's generated admin token is ${adminToken}`);
  }
  const clock = options.clock ?? systemClock;
  const lifecycle = new Lifecycle(logger, config.SHUTDOWN_TIMEOUT_MS);
  const metrics = createMetrics('campaign-service');

  const pool = schemaPool(config.DATABASE_URL, config.DATABASE_POOL_SIZE, logger);
  // What is already running when a later start step fails; closed in reverse order.
  const closers: Array<[string, () => Promise<unknown> | unknown]> = [];
  try {
    await migrate(pool, SCHEMA, MIGRATIONS_DIR, logger);
    const nc = await connectNats(config.NATS_URL, 'campaign-service', logger);
    closers.push(['nats', () => nc.drain()]);
    const jsm = await nc.jetstreamManager();
    await ensureStreams(jsm, config.NATS_PREFIX);
    const js = nc.jetstream();

    const relay = new OutboxRelay(pool, js, logger, config.SCHEDULER_INTERVAL_MS);
    const domain: CampaignDeps = {
      pool,
      clock,
      logger,
      natsPrefix: config.NATS_PREFIX,
      knowledgeEntries: config.KNOWLEDGE_ENTRIES,
      afterCommit: () => relay.kick(),
    };
    const recipientClient = createRecipientClient(config.RECIPIENT_SERVICE_ADDR);
    const readiness = {
      postgres: () => pool.query('SELECT 1'),
      nats: async () => !nc.isClosed() && nc.info !== undefined,
    };

    const app = buildHttpApp({
      domain,
      accessLog: config.ACCESS_LOG,
      recipients: recipientsForwarder(recipientClient),
      adminToken,
      lifecycle,
      metrics,
      readiness,
      secureCookies: config.NODE_ENV !== 'development',
    });
    const http = app.listen(config.DASHBOARD_PORT, config.HOST);
    await new Promise<void>((resolve, reject) => {
      http.once('listening', resolve);
      http.once('error', reject);
    });
    closers.push(['http', () => new Promise<void>((resolve) => http.close(() => resolve()))]);

    const grpc = new Server(GRPC_CHANNEL_OPTIONS);
    addCampaignService(grpc, domain, metrics);
    addGrpcHealth(grpc, lifecycle, readiness);
    const grpcPort = await new Promise<number>((resolve, reject) =>
      grpc.bindAsync(
        `${config.HOST}:${config.CAMPAIGN_GRPC_PORT}`,
        ServerCredentials.createInsecure(),
        (err, port) => (err ? reject(err) : resolve(port)),
      ),
    );

    closers.push(['grpc', () => grpc.forceShutdown()]);
    const stopUsage = await consumeUsage(js, jsm, pool, config.NATS_PREFIX, logger);
    registerPoolMetrics(metrics.registry, pool);
    registerConsumerLag(metrics.registry, jsm, [
      { stream: streamNames(config.NATS_PREFIX).events, consumer: durableName(config.NATS_PREFIX, 'usage') },
      {
        stream: streamNames(config.NATS_PREFIX).events,
        consumer: durableName(config.NATS_PREFIX, 'usage-batches'),
      },
      {
        stream: streamNames(config.NATS_PREFIX).events,
        consumer: durableName(config.NATS_PREFIX, 'usage-starts'),
      },
    ]);
    const stopPruning = pruneAppliedPeriodically(
      { pool, logger, clock },
      APPLIED_USAGE_TABLES,
      config.USAGE_DEDUP_RETENTION_DAYS,
    );
    registerBudgetMetrics(metrics.registry, domain);
    const scheduler = new LifecycleScheduler(
      pool,
      js,
      config.NATS_PREFIX,
      clock,
      logger,
      config.SCHEDULER_INTERVAL_MS,
    );
    scheduler.start();
    relay.start();

    const metricsServer =
      config.METRICS_PORT > 0
        ? await serveMetrics(metrics.registry, config.METRICS_PORT, config.HOST)
        : undefined;

    // Shutdown order: stop accepting, let in-flight work finish, then NATS, then the pool.
    lifecycle.onShutdown('http', () => new Promise<void>((resolve) => http.close(() => resolve())));
    lifecycle.onShutdown('grpc', () => new Promise<void>((resolve) => grpc.tryShutdown(() => resolve())));
    lifecycle.onShutdown('scheduler', () => scheduler.stop());
    lifecycle.onShutdown('usage consumer', () => Promise.all([stopUsage(), stopPruning()]));
    lifecycle.onShutdown('outbox relay', () => relay.stop());
    lifecycle.onShutdown('recipient client', () => recipientClient.close());
    lifecycle.onShutdown('nats', () => nc.drain());
    lifecycle.onShutdown('postgres', () => pool.end());
    if (metricsServer)
      lifecycle.onShutdown('metrics', () => new Promise<void>((r) => metricsServer.close(() => r())));

    const ports: Record<string, number> = { http: (http.address() as AddressInfo).port, grpc: grpcPort };
    if (metricsServer) ports.metrics = (metricsServer.address() as AddressInfo).port;
    logger.info({ ports }, 'campaign-service started');
    return { name: 'campaign-service', ports, stop: () => lifecycle.shutdown('stop') };
  } catch (err) {
    for (const [, close] of closers.reverse()) await Promise.resolve(close()).catch(() => undefined);
    await pool.end().catch(() => undefined);
    throw err;
  }
}
