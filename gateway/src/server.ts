import { createServer } from 'node:http';
import type { ApiKeyGrantMessage } from '@outreach/contracts';
import {
  type Clock,
  closeServer,
  connectNats,
  createLogger,
  createMetrics,
  createRedis,
  ensureStreams,
  internalTokensOf,
  Lifecycle,
  type Logger,
  listen,
  loadConfig,
  monitorDependencies,
  natsCheck,
  Opened,
  openInternalCaller,
  openMetrics,
  type RunningService,
  redisCheck,
  registerDependencyMetrics,
  systemClock,
} from '@outreach/platform';
import { buildApp } from './app';
import { createBackends } from './clients';
import { CONFIG_SPEC } from './config';
import { GRANT_TTL_MS, GrantCache } from './grant-cache';
import { GATED_HIT_COMMAND } from './rate-limiter';
import { watchRevocations } from './revocations';

/** Options tests pass to `start`. */
export interface StartOptions {
  logger?: Logger;
  clock?: Clock;
  /** Lifetime of a cached grant; only tests lengthen it, to prove the revocation stream alone. */
  grantTtlMs?: number;
  failedAuthPerMinute?: number;
}

/** Starts the gateway like `main` does: config, stores, backends, revocation watch, listen. */
export async function start(env: NodeJS.ProcessEnv, options: StartOptions = {}): Promise<RunningService> {
  const config = loadConfig(CONFIG_SPEC, env);
  const logger = options.logger ?? createLogger('gateway', config.LOG_LEVEL);
  const { token: internalToken } = internalTokensOf(config);
  const clock = options.clock ?? systemClock;
  const lifecycle = new Lifecycle(logger, config.SHUTDOWN_TIMEOUT_MS);
  const metrics = createMetrics('gateway');
  const opened = new Opened();
  try {
    const redis = opened.add(
      'redis',
      createRedis(config.REDIS_URL, logger, config.REDIS_COMMAND_TIMEOUT_MS, {
        autoPipeliningIgnoredCommands: [GATED_HIT_COMMAND],
      }),
      (r) => r.quit(),
    );
    const backends = opened.add(
      'grpc',
      createBackends(
        { recipients: config.RECIPIENT_SERVICE_ADDR, campaigns: config.CAMPAIGN_SERVICE_ADDR },
        config.GRPC_DEADLINE_MS,
        openInternalCaller(opened, config, internalToken, logger, metrics.registry),
      ),
      (b) => b.close(),
    );
    const grants = new GrantCache(
      async (keyHash, forwarded) => {
        const g = await backends.campaigns<ApiKeyGrantMessage>('VerifyApiKey', { keyHash }, forwarded);
        return {
          keyId: g.keyId,
          projectId: g.projectId,
          scopes: g.scopes,
          rateLimitPerMinute: g.rateLimitPerMinute,
          expiresAt: g.expiresAt ?? null,
        };
      },
      clock,
      options.grantTtlMs ?? GRANT_TTL_MS,
    );

    const nc = opened.add('nats', await connectNats(config.NATS_URL, 'gateway', logger), (c) => c.drain());
    await ensureStreams(await nc.jetstreamManager(), config.NATS_PREFIX, {
      replicas: config.NATS_STREAM_REPLICAS,
    });
    opened.addStop(
      'revocations',
      await watchRevocations(nc.jetstream(), config.NATS_PREFIX, (id) => grants.revoke(id), logger),
    );

    const dependencies = monitorDependencies({
      redis: redisCheck(redis),
      recipientService: backends.recipientsHealthy,
      campaignService: backends.campaignsHealthy,
      nats: natsCheck(nc),
    });
    registerDependencyMetrics(metrics.registry, dependencies);
    const app = buildApp({
      logger,
      accessLog: config.ACCESS_LOG,
      redis,
      redisPrefix: config.REDIS_PREFIX,
      backends,
      grants,
      metrics,
      lifecycle,
      dependencies,
      trustProxy: config.TRUST_PROXY,
      trustedHops: config.TRUSTED_PROXY_HOPS,
      failedAuthPerMinute: options.failedAuthPerMinute,
    });
    const ports: Record<string, number> = {};
    const metricsPort = await openMetrics(opened, metrics.registry, config.METRICS_PORT, config.HOST);
    if (metricsPort) ports.metrics = metricsPort;
    const server = opened.add('http', createServer(app.callback()), closeServer);
    ports.http = await listen(server, config.GATEWAY_PORT, config.HOST);

    opened.handTo(lifecycle);
    logger.info({ ports }, 'gateway listening');
    return { name: 'gateway', ports, stop: () => lifecycle.shutdown('stop') };
  } catch (err) {
    await opened.closeAfterFailedStart(logger);
    throw err;
  }
}
