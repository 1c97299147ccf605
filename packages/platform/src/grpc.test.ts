import { credentials, Server, type ServerUnaryCall, status } from '@grpc/grpc-js';
import {
  clientChannelOptions,
  loadHealthProto,
  loadRecipientsProto,
  serverChannelOptions,
} from '@outreach/contracts';
import pino from 'pino';
import { COMMON_CONFIG, ConfigError, internalTokensOf, loadConfig } from './config';
import { AppError, toAppError } from './errors';
import {
  ALSO_ACCEPTED_CALLS_METRIC,
  ALSO_ACCEPTED_SET_METRIC,
  callUnary,
  createGrpcServer,
  fromItemRefusal,
  fromServiceError,
  INTERNAL_TOKEN_REFUSED,
  internalClient,
  toItemRefusal,
  unary,
} from './grpc';
import { bindGrpc } from './listen';
import { LogSampler } from './log-sampler';
import { createMetrics } from './metrics';

const call = (request: unknown) => ({ request }) as ServerUnaryCall<unknown, unknown>;

describe('unary', () => {
  it('answers once and counts each call by method and gRPC status name', async () => {
    const metrics = createMetrics('test');
    const logger = pino({ level: 'silent' });
    const ok = unary(logger, 'Get', async () => ({ id: 'x' }), metrics);
    const missing = unary(
      logger,
      'Get',
      async () => {
        throw new AppError('not_found');
      },
      metrics,
    );
    const answers: unknown[] = [];
    await new Promise<void>((resolve) =>
      ok(call({}), (err, res) => {
        answers.push([err, res]);
        resolve();
      }),
    );
    await new Promise<void>((resolve) =>
      missing(call({}), (err) => {
        answers.push(err?.code);
        resolve();
      }),
    );
    expect(answers).toEqual([[null, { id: 'x' }], 5]);
    const text = await metrics.registry.getSingleMetricAsString('grpc_server_handled_total');
    expect(text).toMatch(/method="Get",code="OK",service="test"} 1/);
    expect(text).toMatch(/method="Get",code="NOT_FOUND",service="test"} 1/);
  });

  it('logs a failure underneath, not a refusal by the rules', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const failures = [
      new AppError('not_found'),
      new AppError('unavailable', undefined, { cause: new Error('connect ECONNREFUSED') }),
      new Error('a bug'),
    ];
    for (const failure of failures) {
      const handler = unary(logger, 'Get', async () => {
        throw failure;
      });
      await new Promise<void>((resolve) => handler(call({}), () => resolve()));
    }
    expect(
      lines
        .filter((l) => l.msg === 'grpc handler failed')
        .map((l) => ((l.err ?? l.cause) as { message: string }).message),
    ).toEqual(['connect ECONNREFUSED', 'a bug']);
  });

  it('logs an outage once per interval and method without stacks, counting those left out, and each unexpected error with its stack', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    let now = 0;
    const sampler = new LogSampler(10_000, () => now);
    let thrown: unknown;
    const handler = unary(
      logger,
      'Get',
      async () => {
        throw thrown;
      },
      undefined,
      sampler,
    );
    const run = () => new Promise<void>((resolve) => handler(call({}), () => resolve()));
    // A dependency out of reach: the store's refusal, the downstream service's UNAVAILABLE.
    thrown = new AppError('unavailable', undefined, { cause: new Error('connect ECONNREFUSED') });
    for (let i = 0; i < 1000; i++) await run();
    // Another cause meanwhile gets a line of its own at once.
    thrown = fromServiceError({ code: status.DEADLINE_EXCEEDED, details: 'Deadline exceeded' });
    await run();
    now = 10_000;
    thrown = new AppError('unavailable', undefined, { cause: new Error('connect ECONNREFUSED') });
    await run();
    thrown = new Error('a bug');
    for (let i = 0; i < 3; i++) await run();
    const failed = lines.filter((l) => l.msg === 'grpc handler failed');
    const outages = failed.filter((l) => l.code === 'unavailable');
    expect(outages.map((l) => l.omitted)).toEqual([0, 0, 999]);
    expect(outages[0]).toMatchObject({
      level: 50,
      method: 'Get',
      cause: { message: 'connect ECONNREFUSED' },
    });
    expect(outages[1]).toMatchObject({ cause: { code: status.DEADLINE_EXCEEDED } });
    expect(outages[2]).toMatchObject({ cause: { message: 'connect ECONNREFUSED' } });
    expect(JSON.stringify(outages)).not.toMatch(/\n\s+at /);
    const unexpected = failed.filter((l) => l.err !== undefined);
    expect(unexpected).toHaveLength(3);
    for (const l of unexpected) expect((l.err as { stack: string }).stack).toMatch(/\n\s+at /);
    expect(failed).toHaveLength(6);
  });
});

/** What a client receives when a real server's handler throws `thrown`. */
async function errorAcrossTheWire(thrown: unknown): Promise<unknown> {
  const server = new Server();
  server.addService(loadHealthProto().grpc.health.v1.Health.service, {
    Check: unary(pino({ level: 'silent' }), 'Check', async () => {
      throw thrown;
    }),
  });
  const port = await bindGrpc(server, '127.0.0.1', 0);
  const Health = loadHealthProto().grpc.health.v1.Health;
  const client = new Health(`127.0.0.1:${port}`, credentials.createInsecure());
  try {
    return await callUnary(client, 'Check', { service: '' }).then(
      () => undefined,
      (e: unknown) => e,
    );
  } finally {
    client.close();
    server.forceShutdown();
  }
}

describe('errors across the wire', () => {
  it('carries details and hints in any script, and control characters, back exactly', async () => {
    const sent = new AppError('not_found', 'No recipient «é».', {
      details: { id: 'é\u0000漢😀\u007f', pointer: '/naïve' },
      hint: 'Vérifiez l’identifiant.',
    });
    const received = fromServiceError(await errorAcrossTheWire(sent));
    expect(received.code).toBe('not_found');
    expect(received.message).toBe('No recipient «é».');
    expect(received.details).toEqual({ id: 'é\u0000漢😀\u007f', pointer: '/naïve' });
    expect(received.hint).toBe('Vérifiez l’identifiant.');
  });

  it("gives an unexpected failure the caller's request id, one call or one item of a batch", async () => {
    const received = fromServiceError(await errorAcrossTheWire(new Error('a bug')), 'req-call');
    expect(received.code).toBe('internal');
    expect(received.toBody().details).toEqual({ requestId: 'req-call' });
    const item = fromItemRefusal(toItemRefusal(toAppError(new Error('a bug'))), 'req-item');
    expect(item.toBody().details).toEqual({ requestId: 'req-item' });
  });

  it('answers INTERNAL rather than leave a call unanswered when an error cannot be mapped', async () => {
    const logger = pino({ level: 'silent' });
    const unmappable = new AppError('not_found', undefined, { details: { loop: 1n } });
    const handler = unary(logger, 'Get', async () => {
      throw unmappable;
    });
    const code = await new Promise((resolve) => handler(call({}), (err) => resolve(err?.code)));
    expect(code).toBe(13);
  });
});

describe('client channels', () => {
  it('spread calls round robin over every address a multi-address target resolves to', async () => {
    const logger = pino({ level: 'silent' });
    const Health = loadHealthProto().grpc.health.v1.Health;
    const served = [0, 0];
    const servers = [new Server(), new Server()];
    const ports: number[] = [];
    for (const [i, server] of servers.entries()) {
      server.addService(Health.service, {
        Check: unary(logger, 'Check', async () => {
          served[i]++;
          return { status: 'SERVING' };
        }),
      });
      ports.push(await bindGrpc(server, '127.0.0.1', 0));
    }
    // Two addresses for one name, as a headless Service's DNS name gives every ready pod.
    const target = `ipv4:127.0.0.1:${ports[0]},127.0.0.1:${ports[1]}`;
    const client = new Health(target, credentials.createInsecure(), clientChannelOptions(target));
    try {
      for (let i = 0; i < 20; i++) await callUnary(client, 'Check', { service: '' });
      expect(served[0]).toBeGreaterThan(0);
      expect(served[1]).toBeGreaterThan(0);
      expect(served[0] + served[1]).toBe(20);
    } finally {
      client.close();
      for (const server of servers) server.forceShutdown();
    }
    // A plain host:port (a ClusterIP Service) keeps grpc-js's pick_first.
    const balancing = (target: string) =>
      'loadBalancingConfig' in JSON.parse(String(clientChannelOptions(target)['grpc.service_config']));
    expect(balancing('recipient-service:50051')).toBe(false);
    expect(balancing('dns:///recipient-service-headless:50051')).toBe(true);
  });

  it('connect again once the server ends a connection for its age, failing no call', async () => {
    const { Health } = loadHealthProto().grpc.health.v1;
    const peers = new Set<string>();
    const server = new Server(serverChannelOptions(300));
    server.addService(Health.service, {
      Check: (c: ServerUnaryCall<unknown, unknown>, cb: (err: null, res: object) => void) => {
        // The client's address and port: a new port is a new connection.
        peers.add(c.getPeer());
        cb(null, { status: 'SERVING' });
      },
    });
    const port = await bindGrpc(server, '127.0.0.1', 0);
    // A plain host:port, as a client of a ClusterIP Service has it (pick_first).
    const target = `127.0.0.1:${port}`;
    const client = new Health(target, credentials.createInsecure(), clientChannelOptions(target));
    try {
      const until = Date.now() + 1500;
      let calls = 0;
      while (Date.now() < until) {
        await Promise.all(Array.from({ length: 5 }, () => callUnary(client, 'Check', { service: '' })));
        calls += 5;
        await new Promise((r) => setTimeout(r, 20));
      }
      // Every call answered (callUnary throws otherwise), over several connections.
      expect(calls).toBeGreaterThan(20);
      expect(peers.size).toBeGreaterThanOrEqual(3);
    } finally {
      client.close();
      server.forceShutdown();
    }
  });

  it('try a read once more after UNAVAILABLE, and never a write', async () => {
    const { RecipientService } = loadRecipientsProto().outreach.v1;
    const calls = { GetRecipient: 0, UpdateRecipient: 0 };
    const unavailableFirst =
      (method: keyof typeof calls) => (_: unknown, cb: (err: object | null, res?: object) => void) => {
        // The first call of each method fails as one sent on a connection the server just ended.
        if (calls[method]++ === 0) cb({ code: status.UNAVAILABLE, details: 'connection ended' });
        else cb(null, { id: 'rcp_x' });
      };
    const server = new Server();
    server.addService(RecipientService.service, {
      GetRecipient: unavailableFirst('GetRecipient'),
      UpdateRecipient: unavailableFirst('UpdateRecipient'),
    });
    const port = await bindGrpc(server, '127.0.0.1', 0);
    const target = `127.0.0.1:${port}`;
    const client = new RecipientService(target, credentials.createInsecure(), clientChannelOptions(target));
    try {
      const read = await callUnary<object, { id: string }>(client, 'GetRecipient', {
        projectId: 'p',
        recipientId: 'rcp_x',
      });
      expect(read.id).toBe('rcp_x');
      expect(calls.GetRecipient).toBe(2);
      const write = await callUnary(client, 'UpdateRecipient', {
        projectId: 'p',
        recipientId: 'rcp_x',
      }).catch((e) => e);
      expect(write.code).toBe(status.UNAVAILABLE);
      expect(calls.UpdateRecipient).toBe(1);
    } finally {
      client.close();
      server.forceShutdown();
    }
  });
});

describe('internal token', () => {
  const TOKEN = 'internal-token-of-at-least-32-characters';

  it('is required of every call but health checks, and carried by internal clients', async () => {
    const { RecipientService } = loadRecipientsProto().outreach.v1;
    const { Health } = loadHealthProto().grpc.health.v1;
    const seen: unknown[] = [];
    const server = createGrpcServer(TOKEN, pino({ level: 'silent' }));
    server.addService(RecipientService.service, {
      GetRecipient: (c: ServerUnaryCall<unknown, unknown>, cb: (err: null, res: object) => void) => {
        // Handlers never see the token.
        seen.push(c.metadata.get('authorization'));
        cb(null, { id: 'rcp_x' });
      },
    });
    server.addService(Health.service, {
      Check: (_: unknown, cb: (err: null, res: object) => void) => cb(null, { status: 'SERVING' }),
    });
    const target = `127.0.0.1:${await bindGrpc(server, '127.0.0.1', 0)}`;
    const clients = {
      none: internalClient(RecipientService, target, { token: undefined }),
      wrong: internalClient(RecipientService, target, { token: `${TOKEN}x` }),
      right: internalClient(RecipientService, target, { token: TOKEN }),
      health: internalClient(Health, target, { token: undefined }, {}),
    };
    const request = { projectId: 'p', recipientId: 'rcp_x' };
    try {
      for (const client of [clients.none, clients.wrong]) {
        const err = await callUnary(client, 'GetRecipient', request).catch((e) => e);
        expect(err.code).toBe(status.UNAUTHENTICATED);
        // Its caller answers 503 without detail.
        const mapped = fromServiceError(err, 'req_1');
        expect(mapped.code).toBe('unavailable');
        expect(mapped.details).toEqual({ requestId: 'req_1' });
        expect((mapped.cause as Error).message).toBe(INTERNAL_TOKEN_REFUSED);
      }
      expect(seen).toEqual([]);
      const ok = await callUnary<object, { id: string }>(clients.right, 'GetRecipient', request);
      expect(ok.id).toBe('rcp_x');
      expect(seen).toEqual([[]]);
      const health = await callUnary<object, { status: string }>(clients.health, 'Check', { service: '' });
      expect(health.status).toBe('SERVING');
    } finally {
      for (const client of Object.values(clients)) client.close();
      server.forceShutdown();
    }
  });

  it('under INTERNAL_TOKEN_MODE=accept-missing lets a call without one through (logged, sampled), still refusing a wrong one', async () => {
    const { RecipientService } = loadRecipientsProto().outreach.v1;
    const lines: { level: number; msg: string; method?: string; omitted?: number }[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const seen: unknown[] = [];
    const server = createGrpcServer(TOKEN, logger, undefined, 'accept-missing');
    server.addService(RecipientService.service, {
      GetRecipient: (c: ServerUnaryCall<unknown, unknown>, cb: (err: null, res: object) => void) => {
        seen.push(c.metadata.get('authorization'));
        cb(null, { id: 'rcp_x' });
      },
    });
    const target = `127.0.0.1:${await bindGrpc(server, '127.0.0.1', 0)}`;
    const clients = {
      none: internalClient(RecipientService, target, { token: undefined }),
      wrong: internalClient(RecipientService, target, { token: `${TOKEN}x` }),
      right: internalClient(RecipientService, target, { token: TOKEN }),
    };
    const request = { projectId: 'p', recipientId: 'rcp_x' };
    try {
      for (let i = 0; i < 3; i++) {
        const ok = await callUnary<object, { id: string }>(clients.none, 'GetRecipient', request);
        expect(ok.id).toBe('rcp_x');
      }
      // Sampled: one warn line for the three calls of that method.
      const accepted = lines.filter((l) => l.msg.startsWith('grpc call accepted without INTERNAL_TOKEN'));
      expect(accepted).toEqual([
        expect.objectContaining({
          level: 40,
          method: '/outreach.v1.RecipientService/GetRecipient',
          omitted: 0,
        }),
      ]);
      const err = await callUnary(clients.wrong, 'GetRecipient', request).catch((e) => e);
      expect(err.code).toBe(status.UNAUTHENTICATED);
      const ok = await callUnary<object, { id: string }>(clients.right, 'GetRecipient', request);
      expect(ok.id).toBe('rcp_x');
      // Handlers never see the token, nor a call refused.
      expect(seen).toEqual([[], [], [], []]);
    } finally {
      for (const client of Object.values(clients)) client.close();
      server.forceShutdown();
    }
  });

  it('requires it by default (INTERNAL_TOKEN_MODE=require), of a call without one as of a wrong one', async () => {
    const { RecipientService } = loadRecipientsProto().outreach.v1;
    expect(loadConfig(COMMON_CONFIG, {}).INTERNAL_TOKEN_MODE).toBe('require');
    expect(() => loadConfig(COMMON_CONFIG, { INTERNAL_TOKEN_MODE: 'off' })).toThrow(ConfigError);
    const server = createGrpcServer(TOKEN, pino({ level: 'silent' }), undefined, 'require');
    server.addService(RecipientService.service, {
      GetRecipient: (_: unknown, cb: (err: null, res: object) => void) => cb(null, { id: 'rcp_x' }),
    });
    const target = `127.0.0.1:${await bindGrpc(server, '127.0.0.1', 0)}`;
    const clients = [
      internalClient(RecipientService, target, { token: undefined }),
      internalClient(RecipientService, target, { token: `${TOKEN}x` }),
    ];
    try {
      for (const client of clients) {
        const err = await callUnary(client, 'GetRecipient', { projectId: 'p' }).catch((e) => e);
        expect(err.code).toBe(status.UNAUTHENTICATED);
      }
    } finally {
      for (const client of clients) client.close();
      server.forceShutdown();
    }
  });

  describe('during a rotation (INTERNAL_TOKEN_ALSO_ACCEPTED)', () => {
    const NEXT = 'next-internal-token-of-at-least-32-chars';
    const THIRD = 'third-internal-token-of-at-least-32-chars';
    const { RecipientService } = loadRecipientsProto().outreach.v1;

    it('accepts the second token as well as its own, counted from 0 and logged (sampled), and refuses any other', async () => {
      const lines: { level: number; msg: string; method?: string; omitted?: number }[] = [];
      const raw: string[] = [];
      const logger = pino(
        { level: 'warn' },
        {
          write: (line: string) => {
            raw.push(line);
            lines.push(JSON.parse(line));
          },
        },
      );
      const metrics = createMetrics('test');
      const server = createGrpcServer(TOKEN, logger, undefined, 'require', {
        alsoAccepted: NEXT,
        registry: metrics.registry,
      });
      const seen: unknown[] = [];
      server.addService(RecipientService.service, {
        GetRecipient: (c: ServerUnaryCall<unknown, unknown>, cb: (err: null, res: object) => void) => {
          seen.push(c.metadata.get('authorization'));
          cb(null, { id: 'rcp_x' });
        },
      });
      const counted = async () =>
        (await metrics.registry.getSingleMetricAsString(ALSO_ACCEPTED_CALLS_METRIC)).split('\n').pop();
      // Exported before any such call, so that the first ones show in increase().
      expect(await counted()).toBe(`${ALSO_ACCEPTED_CALLS_METRIC}{service="test"} 0`);
      // The rotation not finished shows as long as the second token is set, and says so at start.
      const set = async (registry = metrics.registry) =>
        (await registry.getSingleMetricAsString(ALSO_ACCEPTED_SET_METRIC)).split('\n').pop();
      expect(await set()).toBe(`${ALSO_ACCEPTED_SET_METRIC}{service="test"} 1`);
      expect(lines.filter((l) => l.msg.startsWith('INTERNAL_TOKEN_ALSO_ACCEPTED is set'))).toHaveLength(1);
      const plain = createMetrics('test');
      createGrpcServer(TOKEN, logger, undefined, 'require', { registry: plain.registry }).forceShutdown();
      expect(await set(plain.registry)).toBe(`${ALSO_ACCEPTED_SET_METRIC}{service="test"} 0`);
      expect(lines.filter((l) => l.msg.startsWith('INTERNAL_TOKEN_ALSO_ACCEPTED is set'))).toHaveLength(1);
      const target = `127.0.0.1:${await bindGrpc(server, '127.0.0.1', 0)}`;
      const clients = {
        own: internalClient(RecipientService, target, { token: TOKEN }),
        second: internalClient(RecipientService, target, { token: NEXT }),
        third: internalClient(RecipientService, target, { token: THIRD }),
        none: internalClient(RecipientService, target, { token: undefined }),
      };
      const request = { projectId: 'p', recipientId: 'rcp_x' };
      try {
        for (const client of [clients.own, clients.second, clients.second, clients.second]) {
          const ok = await callUnary<object, { id: string }>(client, 'GetRecipient', request);
          expect(ok.id).toBe('rcp_x');
        }
        for (const client of [clients.third, clients.none]) {
          const err = await callUnary(client, 'GetRecipient', request).catch((e) => e);
          expect(err.code).toBe(status.UNAUTHENTICATED);
        }
        // Handlers never see either token, nor a refused call.
        expect(seen).toEqual([[], [], [], []]);
        expect(await counted()).toBe(`${ALSO_ACCEPTED_CALLS_METRIC}{service="test"} 3`);
        // One warn line for the three calls of that method; the call on its own token has none.
        expect(lines.filter((l) => l.msg.startsWith('grpc call accepted'))).toEqual([
          expect.objectContaining({
            level: 40,
            msg: expect.stringContaining('INTERNAL_TOKEN_ALSO_ACCEPTED'),
            method: '/outreach.v1.RecipientService/GetRecipient',
            omitted: 0,
          }),
        ]);
        expect(lines.filter((l) => l.msg.startsWith('grpc call refused'))).toHaveLength(1);
        for (const token of [TOKEN, NEXT, THIRD]) expect(raw.join('')).not.toContain(token);
      } finally {
        for (const client of Object.values(clients)) client.close();
        server.forceShutdown();
      }
    });

    it('is never sent: internal clients carry INTERNAL_TOKEN alone', async () => {
      const tokens = internalTokensOf({
        NODE_ENV: 'production',
        INTERNAL_TOKEN: TOKEN,
        INTERNAL_TOKEN_ALSO_ACCEPTED: NEXT,
      });
      // A server without a token of its own sees the header as the client sent it.
      const server = createGrpcServer(undefined, pino({ level: 'silent' }));
      const sent: unknown[] = [];
      server.addService(RecipientService.service, {
        GetRecipient: (c: ServerUnaryCall<unknown, unknown>, cb: (err: null, res: object) => void) => {
          sent.push(c.metadata.get('authorization'));
          cb(null, { id: 'rcp_x' });
        },
      });
      const target = `127.0.0.1:${await bindGrpc(server, '127.0.0.1', 0)}`;
      const client = internalClient(RecipientService, target, { token: tokens.token });
      try {
        await callUnary(client, 'GetRecipient', { projectId: 'p', recipientId: 'rcp_x' });
        expect(sent).toEqual([[`Bearer ${TOKEN}`]]);
      } finally {
        client.close();
        server.forceShutdown();
      }
    });

    it('is no token at all once dropped (step 3): the previous one is refused like any other', async () => {
      // Step 2's server took the previous token; step 3's, without the second token, does not.
      const step3 = createGrpcServer(NEXT, pino({ level: 'silent' }));
      step3.addService(RecipientService.service, {
        GetRecipient: (_: unknown, cb: (err: null, res: object) => void) => cb(null, { id: 'rcp_x' }),
      });
      const target = `127.0.0.1:${await bindGrpc(step3, '127.0.0.1', 0)}`;
      const [previous, current] = [TOKEN, NEXT].map((t) =>
        internalClient(RecipientService, target, { token: t }),
      );
      try {
        const err = await callUnary(previous, 'GetRecipient', { projectId: 'p' }).catch((e) => e);
        expect(err.code).toBe(status.UNAUTHENTICATED);
        expect(await callUnary(current, 'GetRecipient', { projectId: 'p' })).toMatchObject({ id: 'rcp_x' });
      } finally {
        previous.close();
        current.close();
        step3.forceShutdown();
      }
    });
  });

  it('is not asked for by a server without one (outside production)', async () => {
    const { RecipientService } = loadRecipientsProto().outreach.v1;
    const server = createGrpcServer(undefined, pino({ level: 'silent' }));
    server.addService(RecipientService.service, {
      GetRecipient: (_: unknown, cb: (err: null, res: object) => void) => cb(null, { id: 'rcp_x' }),
    });
    const target = `127.0.0.1:${await bindGrpc(server, '127.0.0.1', 0)}`;
    const client = internalClient(RecipientService, target, { token: undefined });
    try {
      const ok = await callUnary<object, { id: string }>(client, 'GetRecipient', { projectId: 'p' });
      expect(ok.id).toBe('rcp_x');
    } finally {
      client.close();
      server.forceShutdown();
    }
  });
});
