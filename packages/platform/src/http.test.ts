import { isUtf8 } from 'node:buffer';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { PassThrough, Writable } from 'node:stream';
import Router from '@koa/router';
import fc from 'fast-check';
import Koa from 'koa';
import pino from 'pino';
import { AppError } from './errors';
import {
  type AccessLogMode,
  accessLog,
  healthRoutes,
  inexactNumberAt,
  invalidUtf8At,
  logAppErrors,
  requestContext,
  routeLabel,
} from './http';
import { Lifecycle } from './lifecycle';
import { LogSampler } from './log-sampler';
import { REDACT_PATHS } from './logger';

/** A stream a pino logger writes to, and the lines it wrote, parsed. */
function logSink(): { lines: Record<string, unknown>[]; sink: Writable } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(JSON.parse(String(chunk)));
      cb();
    },
  });
  return { lines, sink };
}

/** Starts a Koa app with requestContext and a route with a secret in its path; returns its log lines. */
async function withApp(
  fn: (url: string) => Promise<void>,
  accessLogMode?: AccessLogMode,
  outageLog?: LogSampler,
): Promise<Record<string, unknown>[]> {
  const { lines, sink } = logSink();
  const app = new Koa();
  // Redacting as every service's logger does (createLogger).
  app.use(
    requestContext(pino({ level: 'info', redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, sink), {
      accessLog: accessLogMode,
      outageLog,
    }),
  );
  const router = new Router();
  router.get('/i/:token', (ctx) => {
    ctx.body = { ok: true };
  });
  router.get('/noted', (ctx) => {
    ctx.state.log.info({ token: 'SECRETTOKEN987654321', note: 'seen' }, 'noted');
    ctx.body = {};
  });
  router.get('/boom', () => {
    throw new Error('driver says: relation "secret_table" does not exist');
  });
  router.get('/refuse', () => {
    throw new AppError('conflict', 'No.', { details: { reason: 'not_editable' } });
  });
  router.get('/closed', () => {
    throw new AppError('unavailable', 'Not now.', { details: { reason: 'campaign_not_active' } });
  });
  router.get('/down', () => {
    throw new AppError('unavailable', undefined, { cause: new Error('connect ECONNREFUSED') });
  });
  app.use(router.routes());
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    await fn(`http://127.0.0.1:${(server.address() as { port: number }).port}`);
  } finally {
    server.close();
  }
  return lines;
}

describe('requestContext', () => {
  it('logs the route template, never the link token in the path', async () => {
    const lines = await withApp(async (url) => {
      await fetch(`${url}/i/SECRETTOKEN123456789`, { headers: { 'x-request-id': 'req-1' } });
    });
    expect(JSON.stringify(lines)).not.toContain('SECRETTOKEN');
    expect(lines[0]).toMatchObject({ route: '/i/:token', status: 200, requestId: 'req-1' });
  });

  it("writes the access line with the request id and redacts the request's own lines as before", async () => {
    const lines = await withApp(async (url) => {
      await fetch(`${url}/noted`, { headers: { 'x-request-id': 'req-2' } });
    });
    expect(JSON.stringify(lines)).not.toContain('SECRETTOKEN');
    expect(lines).toEqual([
      expect.objectContaining({ msg: 'noted', requestId: 'req-2', token: '[redacted]', note: 'seen' }),
      expect.objectContaining({ msg: 'request', requestId: 'req-2', route: '/noted', status: 200 }),
    ]);
    const access = lines[1];
    expect(Object.keys(access).sort()).toEqual(
      ['level', 'time', 'pid', 'hostname', 'requestId', 'method', 'route', 'status', 'ms', 'msg'].sort(),
    );
  });

  it('answers errors with the catalogue body, hides unexpected ones, and echoes the request id', async () => {
    const seen: { status: number; body: unknown; id: string | null }[] = [];
    await withApp(async (url) => {
      for (const p of ['/boom', '/refuse']) {
        const res = await fetch(url + p);
        seen.push({ status: res.status, body: await res.json(), id: res.headers.get('x-request-id') });
      }
    });
    expect(seen[0]).toMatchObject({ status: 500, body: { code: 'internal', retryable: false } });
    expect(JSON.stringify(seen[0].body)).not.toContain('secret_table');
    expect((seen[0].body as { details: { requestId: string } }).details.requestId).toBe(seen[0].id);
    expect(seen[1]).toMatchObject({
      status: 409,
      body: { code: 'conflict', details: { reason: 'not_editable' } },
    });
  });

  it('logs an error for failures underneath a refusal, not for refusals by the rules', async () => {
    const lines = await withApp(async (url) => {
      for (const p of ['/boom', '/closed', '/down']) await fetch(url + p);
    });
    const errors = lines.filter((l) => l.level === 50 && l.msg === 'request failed');
    const statuses = lines.filter((l) => l.msg === 'request').map((l) => l.status);
    expect(statuses).toEqual([500, 503, 503]);
    // The unexpected error and the store failure, not the closed campaign's 503.
    expect(errors).toHaveLength(2);
    // The access lines themselves are no errors, whatever their status: alerts on error lines
    // must not fire for a closed campaign's link or a readiness probe while starting.
    expect(lines.filter((l) => l.msg === 'request').map((l) => l.level)).toEqual([30, 30, 30]);
  });

  it('logs an outage once per interval and route without stacks, counting those left out, and each unexpected error with its stack', async () => {
    let now = 0;
    const sampler = new LogSampler(10_000, () => now);
    const lines = await withApp(
      async (url) => {
        // 1000 requests meeting a store that is down, in a burst.
        for (let i = 0; i < 20; i++)
          await Promise.all(
            Array.from({ length: 50 }, () => fetch(`${url}/down`).then((r) => r.arrayBuffer())),
          );
        now = 10_000;
        await fetch(`${url}/down`);
        for (let i = 0; i < 3; i++) await fetch(`${url}/boom`);
      },
      'none',
      sampler,
    );
    const failed = lines.filter((l) => l.msg === 'request failed');
    const outages = failed.filter((l) => l.code === 'unavailable');
    expect(outages.map((l) => l.omitted)).toEqual([0, 999]);
    expect(outages[0]).toMatchObject({
      level: 50,
      route: '/down',
      cause: { type: 'Error', message: 'connect ECONNREFUSED' },
    });
    expect(outages[0]).not.toHaveProperty('err');
    expect(JSON.stringify(outages)).not.toMatch(/\n\s+at /);
    // The unexpected error keeps its full line, stack and all, every time.
    const unexpected = failed.filter((l) => l.err !== undefined);
    expect(unexpected).toHaveLength(3);
    for (const l of unexpected) expect((l.err as { stack: string }).stack).toMatch(/\n\s+at /);
    expect(failed).toHaveLength(5);
  });

  it('writes access lines for every request, only for those of status 400 and up, or for none, as ACCESS_LOG says', async () => {
    const statuses = async (mode?: AccessLogMode) =>
      (
        await withApp(async (url) => {
          for (const p of ['/i/T0KEN', '/refuse', '/closed', '/missing']) await fetch(url + p);
        }, mode)
      )
        .filter((l) => l.msg === 'request')
        .map((l) => l.status);
    expect(await statuses()).toEqual([200, 409, 503, 404]);
    expect(await statuses('all')).toEqual([200, 409, 503, 404]);
    expect(await statuses('errors')).toEqual([409, 503, 404]);
    expect(await statuses('none')).toEqual([]);
  });
});

describe('routeLabel', () => {
  it('labels the probes by their path in the access lines as in the metrics, and other unrouted paths unmatched', async () => {
    const { lines, sink } = logSink();
    const labelled: string[] = [];
    const app = new Koa();
    app.use(requestContext(pino({ level: 'info' }, sink)));
    // As the services record their request metrics.
    app.use(async (ctx, next) => {
      try {
        await next();
      } finally {
        labelled.push(routeLabel(ctx));
      }
    });
    app.use(healthRoutes(new Lifecycle(pino({ level: 'silent' })), async () => ({})));
    const router = new Router();
    router.get('/i/:token', (ctx) => {
      ctx.body = {};
    });
    app.use(router.routes());
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      for (const p of ['/livez', '/readyz', '/i/T0KEN', '/nowhere'])
        await (await fetch(base + p)).arrayBuffer();
    } finally {
      server.close();
    }
    const routes = lines.filter((l) => l.msg === 'request').map((l) => l.route);
    expect(routes).toEqual(['/livez', '/readyz', '/i/:token', 'unmatched']);
    expect(labelled).toEqual(routes);
  });
});

describe('accessLog', () => {
  it('writes nothing below info, whatever the mode', () => {
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (l: string) => lines.push(l) });
    accessLog(logger, 'all')('r', 'GET', '/x', 500, 1);
    accessLog(logger, 'errors')('r', 'GET', '/x', 500, 1);
    expect(lines).toEqual([]);
  });
});

describe('logAppErrors', () => {
  it("logs a client leaving a streamed response at debug, not as Koa's stack trace on stderr", async () => {
    const { lines, sink } = logSink();
    const app = new Koa();
    logAppErrors(app, pino({ level: 'debug' }, sink));
    const body = new PassThrough();
    app.use((ctx) => {
      ctx.body = body;
      body.write('first part');
    });
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const stderr = jest.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const leave = new AbortController();
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/`, { signal: leave.signal });
      await res.body!.getReader().read();
      leave.abort();
      const until = Date.now() + 2000;
      while (lines.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(lines.map((l) => [l.level, l.msg])).toEqual([[20, 'client went away mid-response']]);
      expect(stderr).not.toHaveBeenCalled();
    } finally {
      stderr.mockRestore();
      body.destroy();
      server.close();
    }
  });
});

describe('healthRoutes', () => {
  it('says starting (503) on /readyz until the service has what it serves with, while /livez is up', async () => {
    let started = false;
    const lifecycle = new Lifecycle(pino({ level: 'silent' }));
    const app = new Koa();
    app.use(
      healthRoutes(
        lifecycle,
        async () => ({ postgres: 'down' as const }),
        () => started,
      ),
    );
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect((await fetch(`${base}/livez`)).status).toBe(200);
      const starting = await fetch(`${base}/readyz`);
      expect(starting.status).toBe(503);
      expect(await starting.json()).toEqual({ status: 'starting' });
      started = true;
      const ready = await fetch(`${base}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'degraded', checks: { postgres: 'down' } });
      // Through the Ingress (a public host), not which store is down.
      const proxied = await fetch(`${base}/readyz`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
      expect(await proxied.json()).toEqual({ status: 'degraded' });
      const rfc7239 = await fetch(`${base}/readyz`, { headers: { forwarded: 'for=203.0.113.9' } });
      expect(await rfc7239.json()).toEqual({ status: 'degraded' });
    } finally {
      server.close();
    }
  });
});

describe('invalidUtf8At', () => {
  it('finds the first byte of what is not UTF-8: a stray, overlong, surrogate or cut sequence', () => {
    const at = (...bytes: number[]) => invalidUtf8At(Uint8Array.from(bytes));
    expect(invalidUtf8At(Buffer.from('Zoë 漢字 😀'))).toBe(-1);
    expect(at(0x61, 0x62, 0xff, 0xfe)).toBe(2);
    expect(at(0x61, 0xc0, 0x80)).toBe(1); // overlong NUL
    expect(at(0xed, 0xa0, 0x80)).toBe(0); // U+D800, a surrogate
    expect(at(0xf4, 0x90, 0x80, 0x80)).toBe(0); // past U+10FFFF
    expect(at(0x61, 0xf0, 0x9f, 0x98)).toBe(1); // an emoji cut short
  });

  it("agrees with Node's own check on any bytes", () => {
    const utf8ish = fc.array(
      fc.oneof(
        fc.integer({ min: 0, max: 255 }),
        fc.integer({ min: 0x80, max: 0xbf }),
        fc.constantFrom(0xed, 0xf4),
      ),
      { maxLength: 12 },
    );
    fc.assert(
      fc.property(utf8ish, (bytes) => {
        const data = Uint8Array.from(bytes);
        const at = invalidUtf8At(data);
        expect(at === -1).toBe(isUtf8(data));
        // Everything before the byte it names is well-formed.
        if (at !== -1) expect(isUtf8(data.subarray(0, at))).toBe(true);
      }),
      { numRuns: 20_000 },
    );
  });
});

describe('inexactNumberAt', () => {
  it('names the first inexact number in document order, at any depth', () => {
    expect(inexactNumberAt(Infinity)).toBe('');
    expect(inexactNumberAt({ a: 1, b: [2.5, 'x', null] })).toBeNull();
    expect(inexactNumberAt({ a: [1, { 'c/d~': 2 ** 53 + 2 }], b: Infinity })).toBe('/a/1/c~1d~0');
    expect(inexactNumberAt([[Infinity], 2 ** 60])).toBe('/0/0');
    expect(inexactNumberAt([2 ** 60, [Infinity]])).toBe('/0');
    const deep = JSON.parse(`${'['.repeat(100_000)}-1e999${']'.repeat(100_000)}`);
    expect(inexactNumberAt(deep)).toBe('/0'.repeat(100_000));
  });
});
