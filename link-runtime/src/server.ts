import { createServer } from 'node:http';
import path from 'node:path';
import { loadRecipientsProto } from '@outreach/contracts';
import {
  type Clock,
  closeServer,
  createLogger,
  createPool,
  createRedis,
  internalClient,
  internalTokensOf,
  Lifecycle,
  type Logger,
  listen,
  loadConfig,
  migrate,
  monitorDependencies,
  natsCheck,
  Opened,
  openInternalCaller,
  openJetStream,
  openMetrics,
  postgresCheck,
  type RunningService,
  redisCheck,
  registerDependencyMetrics,
  registerPoolMetrics,
  systemClock,
} from '@outreach/platform';
import { Admission } from './admission/admission.service';
import { conversationIdsOf, findConversation } from './admission/conversations.repository';
import { unknownConversationsLimit, unknownLinksLimit } from './admission/miss-limits';
import { rollUpPeriodically } from './admission/usage-rollup';
import { linkRequestListener } from './app';
import { createAssistant } from './assistant/assistant.client';
import { CONFIG_SPEC } from './config';
import { ConversationStore, mayHaveHadConversations } from './conversations/conversations.store';
import { createLinkMetrics, registerRecipientCache, registerUsageOutbox } from './metrics';
import { RecipientCache } from './state/recipient.cache';
import { StateCache } from './state/state.cache';

export { CONFIG_SPEC } from './config';

const MIGRATIONS = path.resolve(__dirname, '../migrations');

/** Options a caller (a test, main) may inject. */
export interface StartOptions {
  logger?: Logger;
  clock?: Clock;
}

/** Applies the `link` schema's migrations and exits. */
export async function runMigrations(env: NodeJS.ProcessEnv): Promise<string[]> {
  const config = loadConfig(CONFIG_SPEC, env);
  return migrateLink(config.DATABASE_URL, createLogger('link-runtime', config.LOG_LEVEL));
}

/** Migrates on a pool of its own: a migration, or the wait for another replica's, may take long. */
async function migrateLink(url: string, logger: Logger): Promise<string[]> {
  const pool = createPool('link-runtime', url, 1, logger);
  try {
    return await migrate(pool, 'link', MIGRATIONS, logger);
  } finally {
    await pool.end();
  }
}

/**
 * Starts the link runtime: connects PostgreSQL, Redis, NATS and the recipient service, migrates,
 * replays campaign and device state, and serves the link pages on LINK_PORT (0 picks a free port).
 */
export async function start(env: NodeJS.ProcessEnv, options: StartOptions = {}): Promise<RunningService> {
  const config = loadConfig(CONFIG_SPEC, env);
  const logger = options.logger ?? createLogger('link-runtime', config.LOG_LEVEL);
  const { token: internalToken } = internalTokensOf(config);
  const clock = options.clock ?? systemClock;
  const lifecycle = new Lifecycle(logger, config.SHUTDOWN_TIMEOUT_MS);
  const metrics = createLinkMetrics();
  const opened = new Opened();
  try {
    // Admissions are written one batch at a time: a stuck statement must not hold every start.
    const pool = opened.add(
      'postgres',
      createPool('link-runtime', config.DATABASE_URL, config.DATABASE_POOL_SIZE, logger, {
        statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
      }),
      (p) => p.end(),
    );
    registerPoolMetrics(metrics.registry, pool);
    registerUsageOutbox(metrics.registry, pool, clock);
    await migrateLink(config.DATABASE_URL, logger);
    const redis = opened.add(
      'redis',
      createRedis(config.REDIS_URL, logger, config.REDIS_COMMAND_TIMEOUT_MS),
      (r) => r.quit(),
    );
    // One publish per start: skip the stack trace nats.js captures for every request by default.
    const { nc, jsm, js } = await openJetStream(opened, config, 'link-runtime', logger, {
      noAsyncTraces: true,
    });

    const proto = loadRecipientsProto();
    const recipientClient = opened.add(
      'recipient client',
      internalClient(
        proto.outreach.v1.RecipientService,
        config.RECIPIENT_SERVICE_ADDR,
        openInternalCaller(opened, config, internalToken, logger, metrics.registry),
      ),
      (c) => c.close(),
    );
    const recipients = new RecipientCache(
      recipientClient,
      config.RECIPIENT_CACHE_TTL_SECONDS * 1000,
      config.RECIPIENT_CACHE_MAX_MB * 1024 * 1024,
    );
    registerRecipientCache(metrics.registry, recipients);

    const conversations = new ConversationStore(redis, config.REDIS_PREFIX, config.CONVERSATION_TTL_SECONDS, {
      find: (id) => findConversation(pool, id),
      idsOf: (recipientIds) => conversationIdsOf(pool, recipientIds),
      clock,
    });
    const admission = opened.add(
      'admissions',
      new Admission({
        redis,
        pool,
        js,
        jsm,
        redisPrefix: config.REDIS_PREFIX,
        natsPrefix: config.NATS_PREFIX,
        clock,
        logger,
        groupCommitMs: config.GROUP_COMMIT_MS,
        rebuildGraceMs: config.COUNTER_REBUILD_GRACE_MS,
        statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
        conversationTtlSeconds: config.CONVERSATION_TTL_SECONDS,
        recordAtStart: config.CONVERSATION_RECORD_AT_START,
        usagePublishMs: config.USAGE_PUBLISH_MS,
        replayHours: config.USAGE_REPLAY_HOURS,
        onSeeded: (outcome) => metrics.counterSeeds.inc({ outcome }),
        onWritten: (rows) =>
          void conversations
            .eraseWrittenLate(rows)
            .catch((err) => logger.warn({ err }, "erasing a deleted recipient's conversations failed")),
      }),
      (a) => a.close(),
    );

    const state = opened.add('state', new StateCache(logger), (s) => s.stop());
    await state.followRecipientChanges(js, config.NATS_PREFIX, (event) => {
      recipients.invalidate(event.token, event.recipientId);
      // Limits may have changed: rebuild the recipient's window counters from the record.
      admission
        .forgetRecipient(event.recipientId)
        .catch((err) => logger.warn({ err }, 'counter reset failed'));
      // A deleted recipient's data goes at once, their conversations' history with it (a campaign
      // this runtime does not know may have had some).
      const campaign = state.campaign(event.campaignId);
      if (event.change === 'deleted' && (!campaign || mayHaveHadConversations(campaign, clock())))
        conversations
          .eraseRecipient(event.recipientId)
          .catch((err) => logger.warn({ err }, "erasing a deleted recipient's conversations failed"));
    });
    // Before the servers open: steps stop newest first, so the servers stop accepting before these.
    admission.startSweeper(config.USAGE_REPUBLISH_MS);
    if (config.CONVERSATION_ROLLUP_ENABLED)
      opened.addStop(
        'roll-up',
        rollUpPeriodically({ pool, logger, clock }, config.CONVERSATION_ROLLUP_AFTER_DAYS),
      );
    const dependencies = monitorDependencies({
      postgres: postgresCheck(pool),
      redis: redisCheck(redis),
      nats: natsCheck(nc),
    });
    registerDependencyMetrics(metrics.registry, dependencies);
    const listener = linkRequestListener({
      logger,
      accessLog: config.ACCESS_LOG,
      clock,
      lifecycle,
      dependencies,
      state,
      recipients,
      unknownLinks: unknownLinksLimit(redis, config.REDIS_PREFIX, config.UNKNOWN_LINKS_PER_MINUTE, clock),
      unknownConversations: unknownConversationsLimit(
        redis,
        config.REDIS_PREFIX,
        config.UNKNOWN_CONVERSATIONS_PER_MINUTE,
        clock,
      ),
      admission,
      conversations,
      assistant: createAssistant({
        baseUrl: config.ASSISTANT_BASE_URL,
        apiKey: config.ASSISTANT_API_KEY,
        model: config.ASSISTANT_MODEL,
        timeoutMs: config.ASSISTANT_TIMEOUT_MS,
      }),
      metrics,
      trustProxy: config.TRUST_PROXY,
      trustedHops: config.TRUSTED_PROXY_HOPS,
      publicOrigin: new URL(config.PUBLIC_BASE_URL).origin,
      messagesPerMinute: config.MESSAGES_PER_MINUTE,
      replyMs: config.ASSISTANT_TIMEOUT_MS,
      limits: {
        maxChars: config.MESSAGE_MAX_CHARS,
        historyMessages: config.HISTORY_MAX_MESSAGES,
        knowledgeEntries: config.KNOWLEDGE_ENTRIES,
      },
    });

    const ports: Record<string, number> = {};
    const metricsPort = await openMetrics(opened, metrics.registry, config.METRICS_PORT, config.HOST);
    if (metricsPort) ports.metrics = metricsPort;
    const server = opened.add('http', createServer(listener), closeServer);
    ports.http = await listen(server, config.LINK_PORT, config.HOST);

    // Listening already (the startup probe passes) but not ready (/readyz 503 `starting`) until the
    // replay is done, however long a large state stream takes; start() still resolves only then.
    await state.start(js, config.NATS_PREFIX);

    // The servers stop accepting first, then admissions are flushed, then the stores close.
    opened.handTo(lifecycle);
    logger.info({ ports }, 'link runtime listening');
    return { name: 'link-runtime', ports, stop: () => lifecycle.shutdown('stop') };
  } catch (err) {
    await opened.closeAfterFailedStart(logger);
    throw err;
  }
}
