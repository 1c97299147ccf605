import { createServer, type Server } from 'node:http';
import type { ApiKeyGrantMessage } from '@outreach/contracts';
import {
  type Clock,
  connectNats,
  createLogger,
  createMetrics,
  createRedis,
  ensureStreams,
  Lifecycle,
  type Logger,
  loadConfig,
  type RunningService,
  serveMetrics,
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

const listen = (server: Server, port: number, host: string) =>
  new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });

/** Starts the gateway like `main` does: config, stores, backends, revocation watch, listen. */
export async function start(env: NodeJS.ProcessEnv, options: StartOptions = {}): Promise<RunningService> {
  const config = loadConfig(CONFIG_SPEC, env);
  const logger = options.logger ?? createLogger('gateway', config.LOG_LEVEL);
  const clock = options.clock ?? systemClock;
  const lifecycle = new Lifecycle(logger, config.SHUTDOWN_TIMEOUT_MS);
  const metrics = createMetrics('gateway');
  const redis = createRedis(config.REDIS_URL, logger, { autoPipeliningIgnoredCommands: [GATED_HIT_COMMAND] });
  const backends = createBackends(
    { recipients: config.RECIPIENT_SERVICE_ADDR, campaigns: config.CAMPAIGN_SERVICE_ADDR },
    config.GRPC_DEADLINE_MS,
  );
  const grants = new GrantCache(
    async (keyHash) => {
      const g = await backends.campaigns<ApiKeyGrantMessage>('VerifyApiKey', { keyHash });
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

  let stopWatch: (() => Promise<void>) | undefined;
  const nc = await connectNats(config.NATS_URL, 'gateway', logger);
  try {
    await ensureStreams(await nc.jetstreamManager(), config.NATS_PREFIX);
    stopWatch = await watchRevocations(nc.jetstream(), config.NATS_PREFIX, (id) => grants.revoke(id), logger);
  } catch (err) {
    await nc.close();
    redis.disconnect();
    backends.close();
    throw err;
  }

  const app = buildApp({
    logger,
    accessLog: config.ACCESS_LOG,
    redis,
    redisPrefix: config.REDIS_PREFIX,
    backends,
    grants,
    metrics,
    lifecycle,
    trustProxy: config.TRUST_PROXY,
    failedAuthPerMinute: options.failedAuthPerMinute,
  });
  const server = createServer(app.callback());
  // Idle keep-alive sockets must not hold shutdown open.
  lifecycle.onShutdown('idle sockets', () => server.closeIdleConnections());
  await listen(server, config.GATEWAY_PORT, config.HOST);
  const ports: Record<string, number> = { http: (server.address() as { port: number }).port };
  let metricsServer: Server | undefined;
  if (config.METRICS_PORT > 0) {
    metricsServer = await serveMetrics(metrics.registry, config.METRICS_PORT, config.HOST);
    ports.metrics = (metricsServer.address() as { port: number }).port;
  }

  lifecycle.onShutdown('http', () => new Promise<void>((resolve) => server.close(() => resolve())));
  lifecycle.onShutdown(
    'metrics',
    () => new Promise<void>((resolve) => (metricsServer ? metricsServer.close(() => resolve()) : resolve())),
  );
  lifecycle.onShutdown('revocations', () => stopWatch?.());
  lifecycle.onShutdown('nats', () => nc.drain());
  lifecycle.onShutdown('redis', () => redis.quit());
  lifecycle.onShutdown('grpc', () => backends.close());
  logger.info({ ports }, 'gateway listening');
  return { name: 'gateway', ports, stop: () => lifecycle.shutdown('stop') };
}
