import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { status } from '@grpc/grpc-js';
import { loadHealthProto } from '@outreach/contracts';
import pino from 'pino';
import { Registry } from 'prom-client';
import { ConfigError } from './config';
import { callUnary, createGrpcServer, internalClient } from './grpc';
import type { GrpcTransport } from './grpc-either-transport';
import {
  GRPC_CONNECTIONS_METRIC,
  GRPC_TLS_EXPIRY_METRIC,
  type GrpcServerTls,
  grpcClientCredentials,
  grpcServerTlsOf,
  registerGrpcTlsMetrics,
} from './grpc-tls';
import { bindGrpc, closeGrpcServer } from './listen';

// TEST-ONLY certificates (scripts/make-test-certs.sh): a CA, a server certificate it signed for
// 127.0.0.1, and a CA that signed nothing here.
const FIXTURES = path.resolve(__dirname, '../../../test/fixtures/tls');
const fixture = (name: string) => path.join(FIXTURES, name);
const SERVER = { GRPC_TLS_CERT_FILE: fixture('server.crt'), GRPC_TLS_KEY_FILE: fixture('server.key') };
const TOKEN = 'test-internal-token-0123456789abcdef';

/** The problems a ConfigError thrown by `f` names. */
function problemsOf(f: () => unknown): string[] {
  try {
    f();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('no ConfigError');
}

/** A health server over `tls`, and clients of it: trusting its CA, plaintext, and trusting another CA. */
async function healthServer(tls: GrpcServerTls | undefined, onConnection?: (t: GrpcTransport) => void) {
  const { Health } = loadHealthProto().grpc.health.v1;
  const server = createGrpcServer(TOKEN, pino({ level: 'silent' }));
  server.addService(Health.service, {
    Check: (_: unknown, cb: (err: null, res: object) => void) => cb(null, { status: 'SERVING' }),
  });
  const port = await bindGrpc(server, '127.0.0.1', 0, tls, onConnection);
  const client = (caFile?: string) =>
    internalClient(
      Health,
      `127.0.0.1:${port}`,
      { token: TOKEN, credentials: grpcClientCredentials({ GRPC_TLS_CA_FILE: caFile }) },
      {},
    );
  const clients = {
    trusting: client(fixture('ca.crt')),
    plaintext: client(),
    other: client(fixture('other-ca.crt')),
  };
  return {
    server,
    port,
    clients,
    /** The status a client's Check gets: SERVING, or the gRPC error code. */
    check: async (c: (typeof clients)[keyof typeof clients]) =>
      callUnary<object, { status: string }>(c, 'Check', { service: '' }, { deadlineMs: 3000 }).then(
        (res) => res.status,
        (err) => err.code as number,
      ),
    close: async () => {
      for (const c of Object.values(clients)) c.close();
      await closeGrpcServer(server, 1000);
    },
  };
}

describe('gRPC over TLS', () => {
  it('serves calls to a client trusting its CA, and refuses plaintext and clients trusting another CA', async () => {
    const { check, clients, close } = await healthServer(grpcServerTlsOf(SERVER));
    try {
      expect(await check(clients.trusting)).toBe('SERVING');
      expect(await check(clients.plaintext)).toBe(status.UNAVAILABLE);
      expect(await check(clients.other)).toBe(status.UNAVAILABLE);
    } finally {
      await close();
    }
  });

  it('with GRPC_TLS_ACCEPT_PLAINTEXT serves TLS and plaintext callers on one port, counting each, and still checks certificates', async () => {
    const registry = new Registry();
    const tls = grpcServerTlsOf({ ...SERVER, GRPC_TLS_ACCEPT_PLAINTEXT: true });
    const { check, clients, close, port } = await healthServer(tls, registerGrpcTlsMetrics(registry, tls));
    const counted = async () =>
      Object.fromEntries(
        ((await registry.getSingleMetric(GRPC_CONNECTIONS_METRIC)?.get())?.values ?? []).map((v) => [
          v.labels.transport,
          v.value,
        ]),
      );
    try {
      expect(await check(clients.trusting)).toBe('SERVING');
      expect(await check(clients.plaintext)).toBe('SERVING');
      // Calls go on over the connection each made.
      expect(await check(clients.trusting)).toBe('SERVING');
      expect(await check(clients.plaintext)).toBe('SERVING');
      expect(await counted()).toEqual({ tls: 1, plaintext: 1 });
      expect(await check(clients.other)).toBe(status.UNAVAILABLE);
      expect((await counted()).tls).toBeGreaterThanOrEqual(2);
      // A caller that resets before saying anything costs the server nothing.
      const reset = connect(port, '127.0.0.1');
      await new Promise((resolve) => reset.once('connect', resolve));
      reset.resetAndDestroy();
      await new Promise((resolve) => reset.once('close', resolve));
      expect(await check(clients.plaintext)).toBe('SERVING');
    } finally {
      // A connection still silent does not hold up the shutdown, which frees the port.
      const silent = connect(port, '127.0.0.1');
      await new Promise((resolve) => silent.once('connect', resolve));
      const closed = new Promise((resolve) => silent.once('close', resolve));
      await close();
      await closed;
    }
    const refused = await new Promise<string>((resolve) =>
      connect(port, '127.0.0.1')
        .once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? ''))
        .once('connect', () => resolve('connected')),
    );
    expect(refused).toBe('ECONNREFUSED');
  });

  it('is off unless configured, and a server certificate is checked whole at start, every problem named', () => {
    expect(grpcServerTlsOf({})).toBeUndefined();
    expect(grpcServerTlsOf({ GRPC_TLS_CERT_FILE: '', GRPC_TLS_KEY_FILE: '' })).toBeUndefined();
    expect(grpcServerTlsOf(SERVER)?.acceptPlaintext).toBe(false);
    expect(problemsOf(() => grpcServerTlsOf({ GRPC_TLS_ACCEPT_PLAINTEXT: true }))).toEqual([
      'GRPC_TLS_ACCEPT_PLAINTEXT is set without GRPC_TLS_CERT_FILE and GRPC_TLS_KEY_FILE',
    ]);
    expect(grpcServerTlsOf(SERVER)?.notAfter.getUTCFullYear()).toBeGreaterThan(2100);
    expect(problemsOf(() => grpcServerTlsOf({ GRPC_TLS_CERT_FILE: SERVER.GRPC_TLS_CERT_FILE }))).toEqual([
      'GRPC_TLS_CERT_FILE is set without GRPC_TLS_KEY_FILE',
    ]);
    expect(problemsOf(() => grpcServerTlsOf({ GRPC_TLS_KEY_FILE: SERVER.GRPC_TLS_KEY_FILE }))).toEqual([
      'GRPC_TLS_KEY_FILE is set without GRPC_TLS_CERT_FILE',
    ]);
    const dir = mkdtempSync(path.join(tmpdir(), 'grpc-tls-'));
    const otherKey = path.join(dir, 'other.key');
    writeFileSync(
      otherKey,
      generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }),
    );
    expect(problemsOf(() => grpcServerTlsOf({ ...SERVER, GRPC_TLS_KEY_FILE: otherKey }))).toEqual([
      'GRPC_TLS_KEY_FILE is not the private key of the certificate in GRPC_TLS_CERT_FILE',
    ]);
    const missing = path.join(dir, 'missing.crt');
    const problems = problemsOf(() =>
      grpcServerTlsOf({ GRPC_TLS_CERT_FILE: missing, GRPC_TLS_KEY_FILE: fixture('ca.crt') }),
    );
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^GRPC_TLS_CERT_FILE \(.*missing\.crt\) cannot be read/);
    expect(problems[1]).toMatch(/^GRPC_TLS_KEY_FILE \(.*ca\.crt\) holds no PEM private key$/);
    expect(problemsOf(() => grpcServerTlsOf(SERVER, new Date('2200-01-01T00:00:00Z')))[0]).toMatch(
      /^the certificate in GRPC_TLS_CERT_FILE expired on 2126-/,
    );
    expect(problemsOf(() => grpcClientCredentials({ GRPC_TLS_CA_FILE: fixture('server.key') }))).toEqual([
      `GRPC_TLS_CA_FILE (${fixture('server.key')}) holds no PEM certificate`,
    ]);
    expect(problemsOf(() => grpcClientCredentials({ GRPC_TLS_CA_FILE: missing }))[0]).toMatch(
      /^GRPC_TLS_CA_FILE \(.*missing\.crt\) cannot be read/,
    );
    expect(grpcClientCredentials({})._isSecure()).toBe(false);
    expect(grpcClientCredentials({ GRPC_TLS_CA_FILE: fixture('ca.crt') })._isSecure()).toBe(true);
  });

  it('exports when the certificate it serves expires, 0 for plaintext', async () => {
    const withTls = new Registry();
    const tls = grpcServerTlsOf(SERVER);
    registerGrpcTlsMetrics(withTls, tls);
    const plain = new Registry();
    registerGrpcTlsMetrics(plain, undefined);
    const value = async (r: Registry) =>
      (await r.getSingleMetric(GRPC_TLS_EXPIRY_METRIC)?.get())?.values[0].value;
    expect(await value(withTls)).toBe(Math.floor((tls?.notAfter.getTime() ?? 0) / 1000));
    expect(await value(plain)).toBe(0);
  });
});
