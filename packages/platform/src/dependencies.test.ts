import { createServer } from 'node:http';
import { credentials, Server } from '@grpc/grpc-js';
import { loadHealthProto } from '@outreach/contracts';
import Koa from 'koa';
import pino from 'pino';
import { Registry } from 'prom-client';
import {
  checkDependencies,
  type Dependencies,
  monitorDependencies,
  registerDependencyMetrics,
} from './dependencies';
import { callUnary } from './grpc';
import { addGrpcHealth } from './grpc-health';
import { healthRoutes } from './http';
import { Lifecycle } from './lifecycle';
import { bindGrpc, closeServer, listen } from './listen';

const silent = pino({ level: 'silent' });
const up = async () => true;
const refused = async () => {
  throw new Error('connect ECONNREFUSED');
};

it('finds a dependency down when its check throws, returns false or takes too long', async () => {
  const states = await checkDependencies(
    { ok: up, thrown: refused, no: async () => false, slow: () => new Promise(() => {}) },
    50,
  );
  expect(states).toEqual({ ok: 'ok', thrown: 'down', no: 'down', slow: 'down' });
});

describe('/readyz', () => {
  async function readyz(lifecycle: Lifecycle, checks: Dependencies) {
    const app = new Koa();
    app.use(healthRoutes(lifecycle, monitorDependencies(checks)));
    const server = createServer(app.callback());
    const port = await listen(server, 0, '127.0.0.1');
    try {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`);
      return { status: res.status, body: await res.json() };
    } finally {
      await closeServer(server);
    }
  }

  it('stays ready while a shared store is down, and says which', async () => {
    const lifecycle = new Lifecycle(silent);
    expect(await readyz(lifecycle, { postgres: up, redis: up })).toEqual({
      status: 200,
      body: { status: 'ok', checks: { postgres: 'ok', redis: 'ok' } },
    });
    expect(await readyz(lifecycle, { postgres: up, redis: refused })).toEqual({
      status: 200,
      body: { status: 'degraded', checks: { postgres: 'ok', redis: 'down' } },
    });
  });

  it('turns unready once shutdown began', async () => {
    const lifecycle = new Lifecycle(silent);
    await lifecycle.shutdown('test');
    expect(await readyz(lifecycle, { postgres: up })).toEqual({ status: 503, body: { status: 'draining' } });
  });
});

it('serves grpc.health.v1 SERVING until shutdown begins, NOT_SERVING from then on', async () => {
  const lifecycle = new Lifecycle(silent);
  const server = new Server();
  addGrpcHealth(server, lifecycle);
  const port = await bindGrpc(server, '127.0.0.1', 0);
  const Health = loadHealthProto().grpc.health.v1.Health;
  const client = new Health(`127.0.0.1:${port}`, credentials.createInsecure());
  try {
    expect(await callUnary(client, 'Check', { service: '' })).toMatchObject({ status: 'SERVING' });
    await lifecycle.shutdown('test');
    expect(await callUnary(client, 'Check', { service: '' })).toMatchObject({ status: 'NOT_SERVING' });
  } finally {
    client.close();
    server.forceShutdown();
  }
});

it('exports dependency_up by dependency, checked when scraped', async () => {
  const registry = new Registry();
  let redisUp = true;
  let clock = 0;
  const states = monitorDependencies({ postgres: up, redis: async () => redisUp }, { now: () => clock });
  registerDependencyMetrics(registry, states);
  expect(await registry.metrics()).toMatch(/dependency_up\{dependency="redis"\} 1/);
  redisUp = false;
  clock += 1000;
  const text = await registry.metrics();
  expect(text).toMatch(/dependency_up\{dependency="redis"\} 0/);
  expect(text).toMatch(/dependency_up\{dependency="postgres"\} 1/);
});

describe('monitorDependencies', () => {
  it('runs one round of checks for the callers within maxAgeMs, and a new one after', async () => {
    let clock = 0;
    let runs = 0;
    let redisUp = true;
    const states = monitorDependencies(
      {
        redis: async () => {
          runs++;
          return redisUp;
        },
      },
      { maxAgeMs: 1000, now: () => clock },
    );
    expect(await states()).toEqual({ redis: 'ok' });
    redisUp = false;
    clock = 999;
    expect(await states()).toEqual({ redis: 'ok' });
    expect(runs).toBe(1);
    clock = 1000;
    expect(await states()).toEqual({ redis: 'down' });
    expect(runs).toBe(2);
  });

  it('shares a round under way among the callers that arrive meanwhile', async () => {
    let runs = 0;
    let answer: (ok: boolean) => void = () => {};
    const states = monitorDependencies(
      {
        postgres: () => {
          runs++;
          return new Promise<boolean>((resolve) => {
            answer = resolve;
          });
        },
      },
      { maxAgeMs: 0 },
    );
    const asked = [states(), states(), states()];
    answer(true);
    expect(await Promise.all(asked)).toEqual([{ postgres: 'ok' }, { postgres: 'ok' }, { postgres: 'ok' }]);
    expect(runs).toBe(1);
  });
});
