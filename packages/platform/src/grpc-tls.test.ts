import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { status } from '@grpc/grpc-js';
import { loadHealthProto } from '@outreach/contracts';
import pino from 'pino';
import { Registry } from 'prom-client';
import { ConfigError } from './config';
import { callUnary, createGrpcServer, internalClient } from './grpc';
import {
  GRPC_TLS_EXPIRY_METRIC,
  grpcClientCredentials,
  grpcServerTlsOf,
  registerGrpcTlsMetric,
} from './grpc-tls';
import { bindGrpc } from './listen';

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

describe('gRPC over TLS', () => {
  it('serves calls to a client trusting its CA, and refuses plaintext and clients trusting another CA', async () => {
    const { Health } = loadHealthProto().grpc.health.v1;
    const server = createGrpcServer(TOKEN, pino({ level: 'silent' }));
    server.addService(Health.service, {
      Check: (_: unknown, cb: (err: null, res: object) => void) => cb(null, { status: 'SERVING' }),
    });
    const target = `127.0.0.1:${await bindGrpc(server, '127.0.0.1', 0, grpcServerTlsOf(SERVER))}`;
    const client = (caFile?: string) =>
      internalClient(
        Health,
        target,
        { token: TOKEN, credentials: grpcClientCredentials({ GRPC_TLS_CA_FILE: caFile }) },
        {},
      );
    const clients = {
      trusting: client(fixture('ca.crt')),
      plaintext: client(),
      other: client(fixture('other-ca.crt')),
    };
    const check = (c: (typeof clients)[keyof typeof clients]) =>
      callUnary<object, { status: string }>(c, 'Check', { service: '' }, { deadlineMs: 3000 });
    try {
      expect((await check(clients.trusting)).status).toBe('SERVING');
      for (const refused of [clients.plaintext, clients.other]) {
        const err = await check(refused).catch((e) => e);
        expect(err.code).toBe(status.UNAVAILABLE);
      }
    } finally {
      for (const c of Object.values(clients)) c.close();
      server.forceShutdown();
    }
  });

  it('is off unless configured, and a server certificate is checked whole at start, every problem named', () => {
    expect(grpcServerTlsOf({})).toBeUndefined();
    expect(grpcServerTlsOf({ GRPC_TLS_CERT_FILE: '', GRPC_TLS_KEY_FILE: '' })).toBeUndefined();
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
    registerGrpcTlsMetric(withTls, tls);
    const plain = new Registry();
    registerGrpcTlsMetric(plain, undefined);
    const value = async (r: Registry) =>
      (await r.getSingleMetric(GRPC_TLS_EXPIRY_METRIC)?.get())?.values[0].value;
    expect(await value(withTls)).toBe(Math.floor((tls?.notAfter.getTime() ?? 0) / 1000));
    expect(await value(plain)).toBe(0);
  });
});
