import { createServer } from 'node:http';
import path from 'node:path';
import {
  addGrpcHealth,
  type Clock,
  ConfigError,
  closeGrpcServer,
  closeServer,
  createGrpcServer,
  createLogger,
  createMetrics,
  createPool,
  grpcServerTlsOf,
  internalTokensOf,
  Lifecycle,
  type Logger,
  listen,
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
  randomBase62,
  registerConsumerLag,
  registerDependencyMetrics,
  registerPoolMetrics,
  runPeriodically,
  serveGrpc,
  streamNames,
  systemClock,
} from '@outreach/platform';
import type { Pool } from 'pg';
import { buildHttpApp } from './app';
import { registerBudgetMetrics } from './campaigns/budget.metrics';
import { CONFIG_SPEC } from './config';
import { secureCookiesFor } from './dashboard/auth.pages';
import { pruneInvitations } from './dashboard/invitations.service';
import { prunePasswordResets } from './dashboard/password-resets.service';
import { pruneSessions } from './dashboard/sessions.service';
import type { CampaignDeps } from './deps';
import { CAMPAIGN_OUTBOX } from './events/outbox';
import { keepStateStreamFilled } from './events/state-republisher';
import { addCampaignService } from './grpc/campaign.grpc';
import { createRecipientClient, recipientsForwarder } from './recipients/recipients.client';
import { LifecycleScheduler } from './scheduler/lifecycle.scheduler';
import { APPLIED_USAGE_TABLES, consumeUsage, durableName } from './usage/usage.consumer';

/** The PostgreSQL schema this service owns. */
export const SCHEMA = 'campaigns';
const SESSION_PRUNE_MS = 3600_000;

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

/** The shortest admin token accepted in production (the chart generates 40 random characters). */
export const MIN_ADMIN_TOKEN_LENGTH = 24;

/**
 * Starts the campaign service: admin HTTP API, gRPC CampaignService with health, the
 * outbox relay, the usage consumer and the lifecycle scheduler. Port 0 picks free ports.
 */
export async function start(env: NodeJS.ProcessEnv, options: StartOptions = {}): Promise<RunningService> {
  const config = loadConfig(CONFIG_SPEC, env);
  const logger = options.logger ?? createLogger('campaign-service', config.LOG_LEVEL);
  const { token: internalToken, alsoAccepted: internalTokenAlsoAccepted } = internalTokensOf(config);
  const serverTls = grpcServerTlsOf(config);
  let adminToken = config.ADMIN_TOKEN;
  // It opens every project, and wrong tries are not slowed: only its length keeps it from guesses.
  if (config.NODE_ENV === 'production' && adminToken && adminToken.length < MIN_ADMIN_TOKEN_LENGTH)
    throw new ConfigError([
      `ADMIN_TOKEN must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters in production`,
    ]);
  if (!adminToken) {
    if (config.NODE_ENV === 'production') throw new ConfigError(['ADMIN_TOKEN is required in production']);
    adminToken = randomBase62(32);
    // Logged as message text on purpose: the redaction rules would hide a `token` field.
    logger.warn(`ADMIN_TOKEN is not set; this run's generated admin token is ${adminToken}`);
  }
  const clock = options.clock ?? systemClock;
  const lifecycle = new Lifecycle(logger, config.SHUTDOWN_TIMEOUT_MS);
  const metrics = createMetrics('campaign-service');

  const opened = new Opened();
  try {
    const caller = openInternalCaller(opened, config, internalToken, logger, metrics.registry);
    const pool = opened.add(
      'postgres',
      schemaPool(config.DATABASE_URL, config.DATABASE_POOL_SIZE, logger),
      (p) => p.end(),
    );
    await migrate(pool, SCHEMA, MIGRATIONS_DIR, logger);
    const { nc, jsm, js } = await openJetStream(opened, config, 'campaign-service', logger);

    // Stopped after the servers: what their last requests committed is still published.
    const relay = opened.add(
      'outbox relay',
      new OutboxRelay(CAMPAIGN_OUTBOX, pool, js, logger, config.SCHEDULER_INTERVAL_MS),
      (r) => r.stop(),
    );
    relay.start();
    opened.addStop(
      'state republisher',
      keepStateStreamFilled(
        { pool, jsm, natsPrefix: config.NATS_PREFIX, logger, afterCommit: () => relay.kick() },
        config.STATE_STREAM_CHECK_MS,
      ),
    );
    const domain: CampaignDeps = {
      pool,
      clock,
      logger,
      natsPrefix: config.NATS_PREFIX,
      knowledgeEntries: config.KNOWLEDGE_ENTRIES,
      operatorProjectLimit: config.OPERATOR_PROJECT_LIMIT,
      afterCommit: () => relay.kick(),
    };
    const recipientClient = opened.add(
      'recipient client',
      createRecipientClient(config.RECIPIENT_SERVICE_ADDR, caller),
      (c) => c.close(),
    );
    opened.addStop('usage consumer', await consumeUsage(js, jsm, pool, config.NATS_PREFIX, logger));
    opened.addStop(
      'applied-usage pruning',
      pruneAppliedPeriodically(
        { pool, logger, clock },
        APPLIED_USAGE_TABLES,
        config.USAGE_DEDUP_RETENTION_DAYS,
      ),
    );
    // Sessions nobody comes back to would stay for good (a sign-in forgets only its own operator's),
    // and so would the addresses of invitations no one used, and password reset links.
    opened.addStop(
      'session pruning',
      runPeriodically(
        async () => {
          await pruneSessions({ pool, clock });
          await pruneInvitations({ pool, clock });
          await prunePasswordResets({ pool, clock });
        },
        SESSION_PRUNE_MS,
        logger,
        'session, invitation and password reset pruning failed',
      ),
    );
    const scheduler = opened.add(
      'scheduler',
      new LifecycleScheduler(pool, js, config.NATS_PREFIX, clock, logger, config.SCHEDULER_INTERVAL_MS),
      (sch) => sch.stop(),
    );
    scheduler.start();

    registerPoolMetrics(metrics.registry, pool);
    const events = streamNames(config.NATS_PREFIX).events;
    registerConsumerLag(
      metrics.registry,
      jsm,
      ['usage', 'usage-batches', 'usage-starts'].map((name) => ({
        stream: events,
        consumer: durableName(config.NATS_PREFIX, name),
      })),
    );
    registerBudgetMetrics(metrics.registry, domain);
    const ports: Record<string, number> = {};
    const metricsPort = await openMetrics(opened, metrics.registry, config.METRICS_PORT, config.HOST);
    if (metricsPort) ports.metrics = metricsPort;

    const dependencies = monitorDependencies({
      postgres: postgresCheck(pool),
      nats: natsCheck(nc),
    });
    registerDependencyMetrics(metrics.registry, dependencies);
    const grpc = opened.add(
      'grpc',
      createGrpcServer(internalToken, logger, undefined, config.INTERNAL_TOKEN_MODE, {
        alsoAccepted: internalTokenAlsoAccepted,
        registry: metrics.registry,
        clientNames: serverTls?.clientNames,
      }),
      (server) => closeGrpcServer(server, config.SHUTDOWN_TIMEOUT_MS / 2),
    );
    addCampaignService(grpc, domain, metrics);
    addGrpcHealth(grpc, lifecycle);
    ports.grpc = await serveGrpc(grpc, {
      host: config.HOST,
      port: config.CAMPAIGN_GRPC_PORT,
      tls: serverTls,
      registry: metrics.registry,
      logger,
    });

    const app = buildHttpApp({
      domain,
      accessLog: config.ACCESS_LOG,
      recipients: recipientsForwarder(recipientClient),
      adminToken,
      lifecycle,
      metrics,
      dependencies,
      secureCookies: secureCookiesFor(config.PUBLIC_BASE_URL),
      trustProxy: config.TRUST_PROXY,
      trustedHops: config.TRUSTED_PROXY_HOPS,
    });
    const http = opened.add('http', createServer(app.callback()), closeServer);
    ports.http = await listen(http, config.DASHBOARD_PORT, config.HOST);

    // Stop accepting, let in-flight work finish, then the workers, NATS and the pool.
    opened.handTo(lifecycle);
    logger.info({ ports }, 'campaign-service started');
    return { name: 'campaign-service', ports, stop: () => lifecycle.shutdown('stop') };
  } catch (err) {
    await opened.closeAfterFailedStart(logger);
    throw err;
  }
}
