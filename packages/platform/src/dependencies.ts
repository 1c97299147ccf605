import type Redis from 'ioredis';
import type { NatsConnection } from 'nats';
import type { Pool } from 'pg';
import { Gauge, type Registry } from 'prom-client';
import { callUnary } from './grpc';
import { TIMED_OUT, within } from './within';

/** One dependency check: it throws or returns false when the dependency is out of reach. */
export type DependencyCheck = () => Promise<unknown>;

/** A service's dependency checks by name (`postgres`, `redis`, …). */
export type Dependencies = Record<string, DependencyCheck>;

/** A dependency check of a PostgreSQL pool: a trivial query. */
export function postgresCheck(pool: Pick<Pool, 'query'>): DependencyCheck {
  return () => pool.query('SELECT 1');
}

/** A dependency check of a Redis client: a PING answered. */
export function redisCheck(redis: Pick<Redis, 'ping'>): DependencyCheck {
  return async () => (await redis.ping()) === 'PONG';
}

/**
 * A dependency check of a NATS connection: a round trip to the server, which waits (and so times
 * out) while the connection is down and reconnecting, where `isClosed` would still say false.
 */
export function natsCheck(nc: Pick<NatsConnection, 'flush'>): DependencyCheck {
  return () => nc.flush();
}

/** A dependency check of a gRPC backend: its grpc.health.v1 `Check` answering SERVING. */
export function grpcHealthCheck(healthClient: object, deadlineMs = CHECK_TIMEOUT_MS): () => Promise<boolean> {
  return async () => {
    const res = await callUnary<object, { status: string }>(
      healthClient,
      'Check',
      { service: '' },
      { deadlineMs },
    );
    return res.status === 'SERVING';
  };
}

/** A dependency's state as a check found it. */
export type DependencyState = 'ok' | 'down';

/** How long a check may take before its dependency counts as down. */
const CHECK_TIMEOUT_MS = 2000;

/** Runs every check at once: `down` for one that throws, returns false or takes longer than `timeoutMs`. */
export async function checkDependencies(
  checks: Dependencies,
  timeoutMs = CHECK_TIMEOUT_MS,
): Promise<Record<string, DependencyState>> {
  const states: Record<string, DependencyState> = {};
  await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      try {
        const ok = await within(check(), timeoutMs);
        states[name] = ok === false || ok === TIMED_OUT ? 'down' : 'ok';
      } catch {
        states[name] = 'down';
      }
    }),
  );
  return states;
}

/** Each dependency's state, as `monitorDependencies` last found it. */
export type DependencyStates = () => Promise<Record<string, DependencyState>>;

/** Options of `monitorDependencies`. */
export interface MonitorOptions {
  /** How long a round of checks answers later callers (default 1 s). */
  maxAgeMs?: number;
  timeoutMs?: number;
  now?: () => number;
}

/**
 * Runs `checks` on demand, at most one round per `maxAgeMs`: callers while a round is under way
 * share it, and callers within `maxAgeMs` of its end get its states. Readiness probes and every
 * Prometheus server that scrapes a replica ask for these, so however many there are, the stores
 * see one round of checks a second from each replica rather than one per request.
 */
export function monitorDependencies(checks: Dependencies, options: MonitorOptions = {}): DependencyStates {
  const { maxAgeMs = 1000, timeoutMs = CHECK_TIMEOUT_MS, now = Date.now } = options;
  let last: { states: Record<string, DependencyState>; at: number } | undefined;
  let running: Promise<Record<string, DependencyState>> | undefined;
  return () => {
    if (last && now() - last.at < maxAgeMs) return Promise.resolve(last.states);
    running ??= checkDependencies(checks, timeoutMs)
      .then((states) => {
        last = { states, at: now() };
        return states;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
}

/**
 * Registers `dependency_up{dependency}`: 1 while the dependency answers its check, 0 while it
 * does not, as `states` finds it when scraped. Readiness no longer says when a store is out of
 * reach (see `healthRoutes`); this does, for alerts.
 */
export function registerDependencyMetrics(registry: Registry, states: DependencyStates): void {
  new Gauge({
    name: 'dependency_up',
    help: 'Whether a store or backend the service needs answered its check (1) or not (0) when scraped',
    labelNames: ['dependency'],
    registers: [registry],
    async collect() {
      const found = await states();
      this.reset();
      for (const [dependency, state] of Object.entries(found))
        this.set({ dependency }, state === 'ok' ? 1 : 0);
    },
  });
}
