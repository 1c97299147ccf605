import {
  type AppError,
  type Clock,
  createMetrics,
  isFailure,
  type ServiceMetrics,
  sharedWhileRunning,
} from '@outreach/platform';
import type { Pool } from 'pg';
import { Counter, Gauge, type Registry } from 'prom-client';
import { type UsageBacklog, unconfirmedBacklog } from './admission/conversations.repository';

/** The service metrics plus the link runtime's own counters. */
export interface LinkMetrics extends ServiceMetrics {
  admissions: Counter;
  refusals: Counter<'code' | 'kind'>;
  counterSeeds: Counter<'outcome'>;
}

/** How a seeding of usage counters ended (`link_counter_seeds_total`'s `outcome`). */
export const SEED_OUTCOMES = ['empty', 'restored'] as const;

/** The codes a refusal from a failure underneath takes (`link_refusals_total{kind="failure"}`). */
export const FAILURE_CODES = ['unavailable', 'internal'] as const;

/**
 * Creates the link runtime's metrics on a registry of its own. Every known series of the labelled
 * counters the alerts read starts at 0: a series that appeared only at its first increment would
 * hide that increment from `increase()` and `rate()`, the very first restore after a Redis
 * restart, say.
 */
export function createLinkMetrics(): LinkMetrics {
  const base = createMetrics('link-runtime');
  const metrics: LinkMetrics = {
    ...base,
    admissions: new Counter({
      name: 'link_conversations_admitted_total',
      help: 'Conversations admitted on links',
      registers: [base.registry],
    }),
    refusals: new Counter({
      name: 'link_refusals_total',
      help: 'Link page views, starts and messages refused, by error code and kind (rule or failure)',
      labelNames: ['code', 'kind'],
      registers: [base.registry],
    }),
    counterSeeds: new Counter({
      name: 'link_counter_seeds_total',
      help: 'Usage counters seeded from PostgreSQL because Redis held none, by outcome: empty (nothing to restore: a new recipient or campaign) or restored (Redis lost, evicted or expired them)',
      labelNames: ['outcome'],
      registers: [base.registry],
    }),
  };
  for (const outcome of SEED_OUTCOMES) metrics.counterSeeds.inc({ outcome }, 0);
  for (const code of FAILURE_CODES) metrics.refusals.inc({ code, kind: 'failure' }, 0);
  return metrics;
}

/**
 * Counts a refusal by code and kind: `rule` when the link's rules refused (not found, campaign
 * not active, a cap), `failure` when something underneath failed (see `isFailure`). A 503 can be
 * either, so only the kind tells an outage from a halted campaign.
 */
export function countRefusal(metrics: LinkMetrics, err: AppError): void {
  metrics.refusals.inc({ code: err.code, kind: isFailure(err) ? 'failure' : 'rule' });
}

/**
 * Registers `link_usage_unconfirmed_batches` and `link_usage_unconfirmed_oldest_seconds`: usage
 * events written but not yet confirmed by JetStream, read from the outbox when scraped. While
 * they grow, interaction counts and budgets in the API stand still (NATS down, a failing publish).
 * And `link_usage_replay_batches`: kept batches a replay publishes again after the events stream
 * was created anew, apart, since they are hours old by design and would set off the age alert.
 */
export function registerUsageOutbox(registry: Registry, pool: Pool, clock: Clock): void {
  // A scrape while PostgreSQL is down leaves the gauges out rather than failing the scrape. The
  // three gauges are collected together, so they share one query.
  const read = sharedWhileRunning((_: 'outbox') => unconfirmedBacklog(pool).catch(() => undefined));
  const gauge = (name: string, help: string, measure: (b: UsageBacklog) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        const b = await read('outbox');
        this.reset();
        if (b) this.set(measure(b));
      },
    });
  gauge(
    'link_usage_unconfirmed_batches',
    'Durable writes of admissions whose usage event JetStream has not confirmed yet',
    (b) => b.count,
  );
  gauge(
    'link_usage_unconfirmed_oldest_seconds',
    'Age of the oldest usage event not yet confirmed by JetStream (0 when none waits)',
    (b) => (b.oldest ? Math.max(0, (clock().getTime() - b.oldest.getTime()) / 1000) : 0),
  );
  gauge(
    'link_usage_replay_batches',
    'Kept usage batches waiting to be published again because the events stream was created anew',
    (b) => b.replaying,
  );
}

/** Gauges of the recipient cache's size, read when scraped. */
export function registerRecipientCache(
  registry: Registry,
  cache: { readonly stats: { entries: number; bytes: number } },
): void {
  new Gauge({
    name: 'link_recipient_cache_entries',
    help: 'Link tokens whose recipient (or absence) is cached in this process',
    registers: [registry],
    collect() {
      this.set(cache.stats.entries);
    },
  });
  new Gauge({
    name: 'link_recipient_cache_bytes',
    help: 'Estimated memory of the cached recipients (bounded by RECIPIENT_CACHE_MAX_MB)',
    registers: [registry],
    collect() {
      this.set(cache.stats.bytes);
    },
  });
}
