import { generateKeyPairSync } from 'node:crypto';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { status } from '@grpc/grpc-js';
import { loadHealthProto, loadRecipientsProto } from '@outreach/contracts';
import pino from 'pino';
import { Registry } from 'prom-client';
import { ConfigError } from './config';
import {
  CLIENT_NAME_REFUSED,
  callUnary,
  createGrpcServer,
  fromServiceError,
  type InternalCaller,
  internalClient,
} from './grpc';
import { GRPC_CLIENT_TLS_EXPIRY_METRIC, grpcClientTransport, openInternalCaller } from './grpc-client-tls';
import {
  caBundleOf,
  GRPC_CONNECTIONS_METRIC,
  GRPC_TLS_EXPIRY_METRIC,
  type GrpcServerTls,
  grpcServerTlsOf,
  lastingProblems,
  renewedGrpcServerTls,
} from './grpc-tls';
import { Lifecycle, Opened } from './lifecycle';
import { closeGrpcServer, serveGrpc } from './listen';

// TEST-ONLY certificates (scripts/make-test-certs.sh): a CA and a server certificate it signed for
// 127.0.0.1; another CA and the certificate it signed for the same names (a renewal).
const FIXTURES = path.resolve(__dirname, '../../../test/fixtures/tls');
const fixture = (name: string) => path.join(FIXTURES, name);
const SERVER = { GRPC_TLS_CERT_FILE: fixture('server.crt'), GRPC_TLS_KEY_FILE: fixture('server.key') };
const RENEWED = { GRPC_TLS_CERT_FILE: fixture('renewed.crt'), GRPC_TLS_KEY_FILE: fixture('renewed.key') };
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

/** Log lines written to a pino logger, parsed. */
function capturedLogger() {
  const lines: { level: number; msg: string }[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

/**
 * A health server served with `tls` (serveGrpc), its metrics and logs, and clients of it: one
 * trusting its CA, a plaintext one and one trusting the other CA; `client()` makes more.
 */
async function healthServer(tls: GrpcServerTls | undefined, certificateCheckMs?: number) {
  const { Health } = loadHealthProto().grpc.health.v1;
  const { logger, lines } = capturedLogger();
  const server = createGrpcServer(TOKEN, logger);
  server.addService(Health.service, {
    Check: (_: unknown, cb: (err: null, res: object) => void) => cb(null, { status: 'SERVING' }),
  });
  const registry = new Registry();
  const port = await serveGrpc(server, {
    host: '127.0.0.1',
    port: 0,
    tls,
    registry,
    logger,
    certificateCheckMs,
  });
  const made: ReturnType<typeof internalClient>[] = [];
  // `identity`: the certificate and key it presents (files of the fixtures).
  const client = (caFile?: string, identity?: { cert: string; key: string }) => {
    const config = {
      GRPC_TLS_CA_FILE: caFile,
      GRPC_TLS_CLIENT_CERT_FILE: identity && fixture(identity.cert),
      GRPC_TLS_CLIENT_KEY_FILE: identity && fixture(identity.key),
    };
    const c = internalClient(
      Health,
      `127.0.0.1:${port}`,
      { token: TOKEN, credentials: grpcClientTransport(config).credentials },
      {},
    );
    made.push(c);
    return c;
  };
  const metric = async (name: string) =>
    Object.fromEntries(
      ((await registry.getSingleMetric(name)?.get())?.values ?? []).map((v) => [
        [v.labels.transport, v.labels.outcome].filter(Boolean).join(' '),
        v.value,
      ]),
    );
  return {
    port,
    lines,
    client,
    clients: {
      trusting: client(fixture('ca.crt')),
      plaintext: client(),
      other: client(fixture('other-ca.crt')),
    },
    /** Connections by transport. */
    connections: () => metric(GRPC_CONNECTIONS_METRIC),
    /** The expiry exported, in seconds. */
    expiry: async () => (await metric(GRPC_TLS_EXPIRY_METRIC))[''],
    /** The status a client's Check gets: SERVING, or the gRPC error code. */
    check: async (c: ReturnType<typeof internalClient>) =>
      callUnary<object, { status: string }>(c, 'Check', { service: '' }, { deadlineMs: 3000 }).then(
        (res) => res.status,
        (err) => err.code as number,
      ),
    close: async () => {
      for (const c of made) c.close();
      await closeGrpcServer(server, 1000);
    },
  };
}

/** Resolves once `f` holds, polling; fails after `ms`. */
async function until(f: () => Promise<boolean> | boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await f())) {
    if (Date.now() > end) throw new Error('never held');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * The server certificate and key copied into a directory of their own, where a test may renew
 * them, named by the variables `cert` and `key` (a server's, unless told).
 */
function serverFilesToRenew<C extends string = 'GRPC_TLS_CERT_FILE', K extends string = 'GRPC_TLS_KEY_FILE'>(
  cert = 'GRPC_TLS_CERT_FILE' as C,
  key = 'GRPC_TLS_KEY_FILE' as K,
): Record<C | K, string> {
  const dir = mkdtempSync(path.join(tmpdir(), 'grpc-tls-files-'));
  const files = { [cert]: path.join(dir, 'tls.crt'), [key]: path.join(dir, 'tls.key') } as Record<
    C | K,
    string
  >;
  copyFileSync(fixture('server.crt'), files[cert]);
  copyFileSync(fixture('server.key'), files[key]);
  return files;
}

/** Replaces a file with a copy of another in one step, as the kubelet updates a mounted Secret. */
function replaceFile(file: string, from: string): void {
  copyFileSync(from, `${file}.new`);
  renameSync(`${file}.new`, file);
}

const epochSeconds = (tls: GrpcServerTls | undefined) => Math.floor((tls?.notAfter.getTime() ?? 0) / 1000);

describe('gRPC over TLS', () => {
  it('serves calls to a client trusting its CA, and refuses plaintext and clients trusting another CA', async () => {
    const tls = grpcServerTlsOf(SERVER);
    const { check, clients, close, connections, expiry } = await healthServer(tls);
    try {
      expect(await check(clients.trusting)).toBe('SERVING');
      expect(await check(clients.plaintext)).toBe(status.UNAVAILABLE);
      expect(await check(clients.other)).toBe(status.UNAVAILABLE);
      // The plaintext caller is counted, though refused: a caller a rollout left behind shows.
      expect((await connections())['plaintext refused']).toBeGreaterThanOrEqual(1);
      expect((await connections())['tls taken']).toBeGreaterThanOrEqual(2);
      expect(await expiry()).toBe(epochSeconds(tls));
    } finally {
      await close();
    }
  });

  it('serves plaintext with no TLS metric but an expiry of 0', async () => {
    const { check, clients, close, connections, expiry } = await healthServer(undefined);
    try {
      expect(await check(clients.plaintext)).toBe('SERVING');
      expect(await check(clients.trusting)).toBe(status.UNAVAILABLE);
      expect(await connections()).toEqual({});
      expect(await expiry()).toBe(0);
    } finally {
      await close();
    }
  });

  it('with GRPC_TLS_ACCEPT_PLAINTEXT serves TLS and plaintext callers on one port, counting each, and still checks certificates', async () => {
    const tls = grpcServerTlsOf({ ...SERVER, GRPC_TLS_ACCEPT_PLAINTEXT: true });
    const { check, clients, close, connections, port } = await healthServer(tls);
    try {
      expect(await check(clients.trusting)).toBe('SERVING');
      expect(await check(clients.plaintext)).toBe('SERVING');
      // Calls go on over the connection each made.
      expect(await check(clients.trusting)).toBe('SERVING');
      expect(await check(clients.plaintext)).toBe('SERVING');
      expect(await connections()).toEqual({ 'tls taken': 1, 'plaintext taken': 1 });
      expect(await check(clients.other)).toBe(status.UNAVAILABLE);
      expect((await connections())['tls taken']).toBeGreaterThanOrEqual(2);
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

  it('serves a renewed certificate to new connections without a restart, keeping the one before while the files hold no valid pair', async () => {
    const files = serverFilesToRenew();
    const first = grpcServerTlsOf(files);
    const renewal = grpcServerTlsOf(RENEWED);
    const { check, clients, client, close, expiry, lines } = await healthServer(first, 25);
    try {
      expect(await check(clients.trusting)).toBe('SERVING');
      // Half written: the new certificate before its key. The certificate before is still served.
      replaceFile(files.GRPC_TLS_CERT_FILE, fixture('renewed.crt'));
      await until(() => lines.some((l) => l.level === 40));
      await new Promise((resolve) => setTimeout(resolve, 150)); // several checks more
      expect(await check(client(fixture('ca.crt')))).toBe('SERVING');
      expect(await expiry()).toBe(epochSeconds(first));
      replaceFile(files.GRPC_TLS_KEY_FILE, fixture('renewed.key'));
      await until(async () => (await expiry()) === epochSeconds(renewal));
      // New connections get the renewal (signed by the other CA); the one open goes on.
      expect(await check(client(fixture('other-ca.crt')))).toBe('SERVING');
      expect(await check(client(fixture('ca.crt')))).toBe(status.UNAVAILABLE);
      expect(await check(clients.trusting)).toBe('SERVING');
      const said = lines.filter((l) => l.level >= 30).map((l) => l.msg);
      // The half-written files were reported once, not at every check while they lasted.
      expect(said.filter((m) => m.startsWith('the gRPC certificate files hold no valid'))).toHaveLength(1);
      expect(said).toContain('serving the renewed gRPC certificate');
    } finally {
      await close();
    }
  });

  it('takes up a renewal written as the kubelet updates a mounted Secret: a new directory, then one symlink swapped', async () => {
    // <dir>/tls.crt -> ..data/tls.crt, ..data -> ..<version>: the layout of a Secret volume.
    const dir = mkdtempSync(path.join(tmpdir(), 'grpc-tls-secret-'));
    const version = (name: string, crt: string, key: string) => {
      mkdirSync(path.join(dir, name));
      copyFileSync(fixture(crt), path.join(dir, name, 'tls.crt'));
      copyFileSync(fixture(key), path.join(dir, name, 'tls.key'));
      symlinkSync(name, path.join(dir, '..data_tmp'));
      renameSync(path.join(dir, '..data_tmp'), path.join(dir, '..data'));
    };
    version('..v1', 'server.crt', 'server.key');
    for (const f of ['tls.crt', 'tls.key']) symlinkSync(path.join('..data', f), path.join(dir, f));
    const files = {
      GRPC_TLS_CERT_FILE: path.join(dir, 'tls.crt'),
      GRPC_TLS_KEY_FILE: path.join(dir, 'tls.key'),
    };
    const renewal = grpcServerTlsOf(RENEWED);
    const { check, client, close, expiry, lines } = await healthServer(grpcServerTlsOf(files), 25);
    try {
      expect(await check(client(fixture('ca.crt')))).toBe('SERVING');
      version('..v2', 'renewed.crt', 'renewed.key');
      await until(async () => (await expiry()) === epochSeconds(renewal));
      expect(await check(client(fixture('other-ca.crt')))).toBe('SERVING');
      expect(lines.filter((l) => l.level >= 40)).toEqual([]);
    } finally {
      await close();
    }
  });

  it('fails to serve over TLS on a port already taken, saying so, and checks no certificate afterwards', async () => {
    const taken = await healthServer(grpcServerTlsOf(SERVER));
    const files = serverFilesToRenew();
    const { logger, lines } = capturedLogger();
    const server = createGrpcServer(TOKEN, logger);
    try {
      const err = await serveGrpc(server, {
        host: '127.0.0.1',
        port: taken.port,
        tls: grpcServerTlsOf(files),
        registry: new Registry(),
        logger,
        certificateCheckMs: 10,
      }).catch((e: NodeJS.ErrnoException) => e);
      expect((err as NodeJS.ErrnoException).code).toBe('EADDRINUSE');
      // A renewal now would be logged by any check left running.
      replaceFile(files.GRPC_TLS_CERT_FILE, fixture('renewed.crt'));
      replaceFile(files.GRPC_TLS_KEY_FILE, fixture('renewed.key'));
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(lines).toEqual([]);
    } finally {
      server.forceShutdown();
      await taken.close();
    }
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
    expect(problemsOf(() => grpcClientTransport({ GRPC_TLS_CA_FILE: fixture('server.key') }))).toEqual([
      `GRPC_TLS_CA_FILE (${fixture('server.key')}) holds no PEM certificate`,
    ]);
    expect(problemsOf(() => grpcClientTransport({ GRPC_TLS_CA_FILE: missing }))[0]).toMatch(
      /^GRPC_TLS_CA_FILE \(.*missing\.crt\) cannot be read/,
    );
    expect(grpcClientTransport({}).credentials._isSecure()).toBe(false);
    expect(grpcClientTransport({ GRPC_TLS_CA_FILE: fixture('ca.crt') }).credentials._isSecure()).toBe(true);
  });

  it('reads the files again for a renewal: nothing while unchanged, the pair once renewed', () => {
    const tls = grpcServerTlsOf(SERVER);
    if (!tls) throw new Error('no TLS');
    expect(renewedGrpcServerTls(tls)).toBeUndefined();
    const renewed = renewedGrpcServerTls({ ...tls, cert: Buffer.from('before') });
    expect(renewed?.cert.equals(tls.cert)).toBe(true);
    expect(() => renewedGrpcServerTls(tls, new Date('2200-01-01T00:00:00Z'))).toThrow(ConfigError);
  });

  it('reports problems of the certificate files once two checks in a row found them, once while they last', () => {
    const report = lastingProblems();
    // A swap caught halfway, then fine again: nothing.
    expect([report(['key is not the certificate’s']), report([])]).toEqual([false, false]);
    expect([report(['expired']), report(['expired']), report(['expired'])]).toEqual([false, true, false]);
    // Other problems are new; after a pass, the same ones are new again.
    expect([report(['unreadable']), report(['unreadable'])]).toEqual([false, true]);
    expect([report([]), report(['unreadable']), report(['unreadable'])]).toEqual([false, false, true]);
  });
});

describe('gRPC clients over TLS', () => {
  /** Writes the fixtures `names`, one after the other, over `file` in one step. */
  const writeCa = (file: string, ...names: string[]) => {
    writeFileSync(`${file}.new`, Buffer.concat(names.map((n) => readFileSync(fixture(n)))));
    renameSync(`${file}.new`, file);
  };
  const caFileOf = (...names: string[]) => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'grpc-ca-')), 'ca.crt');
    writeCa(file, ...names);
    return file;
  };

  it('trusts a changed CA file for new connections without a restart: both CAs while the servers move, then the new one alone', async () => {
    const first = await healthServer(grpcServerTlsOf(SERVER));
    const renewed = await healthServer(grpcServerTlsOf(RENEWED));
    const caFile = caFileOf('ca.crt');
    const { logger, lines } = capturedLogger();
    const opened = new Opened();
    const caller = openInternalCaller(
      opened,
      { GRPC_TLS_CA_FILE: caFile },
      TOKEN,
      logger,
      new Registry(),
      25,
    );
    const { Health } = loadHealthProto().grpc.health.v1;
    const made: ReturnType<typeof internalClient>[] = [];
    // A client of its own connection, as one of a pod started after the change would make.
    const newClient = (server: { port: number }, from: InternalCaller = caller) => {
      const c = internalClient(Health, `127.0.0.1:${server.port}`, from, {
        'grpc.use_local_subchannel_pool': 1,
      });
      made.push(c);
      return c;
    };
    const changes = () =>
      lines.filter((l) => l.msg === 'new gRPC connections trust the changed CA file').length;
    try {
      const openBefore = newClient(first);
      expect(await first.check(openBefore)).toBe('SERVING');
      expect(await renewed.check(newClient(renewed))).toBe(status.UNAVAILABLE);
      // Step 1 of a CA rotation: both CAs, while the servers move to certificates of the new one.
      writeCa(caFile, 'ca.crt', 'other-ca.crt');
      await until(() => changes() === 1);
      expect(await renewed.check(newClient(renewed))).toBe('SERVING');
      expect(await first.check(newClient(first))).toBe('SERVING');
      // Step 2: the new CA alone.
      writeCa(caFile, 'other-ca.crt');
      await until(() => changes() === 2);
      expect(await renewed.check(newClient(renewed))).toBe('SERVING');
      expect(await first.check(newClient(first))).toBe(status.UNAVAILABLE);
      // The connection made before the changes goes on.
      expect(await first.check(openBefore)).toBe('SERVING');
      // A file without a valid bundle leaves the one before trusted, and is reported once.
      writeFileSync(caFile, '-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n');
      await until(() => lines.some((l) => l.level === 40));
      await new Promise((resolve) => setTimeout(resolve, 150)); // several checks more
      expect(await renewed.check(newClient(renewed))).toBe('SERVING');
      expect(lines.filter((l) => l.level >= 40).map((l) => l.msg)).toEqual([
        'the gRPC client TLS files hold nothing valid; new connections still use what they held before',
      ]);
      expect(changes()).toBe(2);
      // A caller made without the checks (reading the file once) would have stayed on the first CA.
      const unchecked = {
        token: TOKEN,
        credentials: grpcClientTransport({ GRPC_TLS_CA_FILE: fixture('ca.crt') }).credentials,
      };
      expect(await renewed.check(newClient(renewed, unchecked))).toBe(status.UNAVAILABLE);
    } finally {
      for (const c of made) c.close();
      const lifecycle = new Lifecycle(logger, 1000);
      opened.handTo(lifecycle);
      await lifecycle.shutdown('test');
      await first.close();
      await renewed.close();
    }
  });

  it('stops reading the CA file once closed', async () => {
    const caFile = caFileOf('ca.crt');
    const { logger, lines } = capturedLogger();
    const opened = new Opened();
    openInternalCaller(opened, { GRPC_TLS_CA_FILE: caFile }, TOKEN, logger, new Registry(), 10);
    const lifecycle = new Lifecycle(logger, 1000);
    opened.handTo(lifecycle);
    await lifecycle.shutdown('test');
    const before = lines.length;
    writeCa(caFile, 'other-ca.crt');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(lines.slice(before)).toEqual([]);
  });

  it('checks every certificate of a CA bundle, naming the one that does not parse', () => {
    expect(
      caBundleOf('GRPC_TLS_CA_FILE', caFileOf('ca.crt', 'other-ca.crt')).certificates.map((c) => c.subject),
    ).toEqual(['CN=Outreach test CA', 'CN=Another test CA']);
    const file = caFileOf('ca.crt');
    writeFileSync(
      file,
      `${readFileSync(file, 'latin1')}-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n`,
    );
    expect(problemsOf(() => caBundleOf('GRPC_TLS_CA_FILE', file))).toEqual([
      `GRPC_TLS_CA_FILE (${file}): certificate 2 of 2 cannot be parsed`,
    ]);
    // In plaintext there is no file to read again.
    expect(grpcClientTransport({}).reread()).toBeUndefined();
  });

  it('with GRPC_TLS_CLIENT_CA_FILE refuses callers without a certificate its CAs signed, and takes up a changed client CA', async () => {
    const clientCa = caFileOf('ca.crt');
    const tls = grpcServerTlsOf({ ...SERVER, GRPC_TLS_CLIENT_CA_FILE: clientCa });
    const { check, client, close, lines } = await healthServer(tls, 25);
    const own = { cert: 'server.crt', key: 'server.key' };
    const othersCa = { cert: 'renewed.crt', key: 'renewed.key' };
    try {
      const before = client(fixture('ca.crt'), own);
      expect(await check(before)).toBe('SERVING');
      expect(await check(client(fixture('ca.crt')))).toBe(status.UNAVAILABLE);
      expect(await check(client(fixture('ca.crt'), othersCa))).toBe(status.UNAVAILABLE);
      // The callers move to certificates of the other CA: the server asks for those from now on.
      writeCa(clientCa, 'other-ca.crt');
      await until(() =>
        lines.some((l) => l.msg === 'asking new gRPC callers for certificates of the changed client CA file'),
      );
      expect(await check(client(fixture('ca.crt'), othersCa))).toBe('SERVING');
      expect(await check(client(fixture('ca.crt'), own))).toBe(status.UNAVAILABLE);
      // The connection made before goes on.
      expect(await check(before)).toBe('SERVING');
    } finally {
      await close();
    }
  });

  it('exports 0 as the client certificate expiry when the service presents none (plaintext, or TLS without mutual TLS)', async () => {
    const { logger } = capturedLogger();
    for (const config of [{}, { GRPC_TLS_CA_FILE: fixture('ca.crt') }]) {
      const opened = new Opened();
      const registry = new Registry();
      openInternalCaller(opened, config, TOKEN, logger, registry);
      expect((await registry.getSingleMetric(GRPC_CLIENT_TLS_EXPIRY_METRIC)?.get())?.values).toEqual([
        { labels: {}, value: 0 },
      ]);
      const lifecycle = new Lifecycle(logger, 1000);
      opened.handTo(lifecycle);
      await lifecycle.shutdown('test');
    }
  });

  it('takes only callers whose certificate bears one of GRPC_TLS_CLIENT_NAMES, for health checks too, plaintext ones refused', async () => {
    const { RecipientService } = loadRecipientsProto().outreach.v1;
    const { Health } = loadHealthProto().grpc.health.v1;
    const { logger, lines } = capturedLogger();
    const servers: Awaited<ReturnType<typeof createGrpcServer>>[] = [];
    const serve = async (names: string, acceptPlaintext = false) => {
      const tls = grpcServerTlsOf({
        ...SERVER,
        GRPC_TLS_CLIENT_CA_FILE: fixture('ca.crt'),
        GRPC_TLS_CLIENT_NAMES: names,
        GRPC_TLS_ACCEPT_PLAINTEXT: acceptPlaintext,
      });
      const server = createGrpcServer(TOKEN, logger, undefined, 'require', { clientNames: tls?.clientNames });
      server.addService(RecipientService.service, {
        GetRecipient: (_: unknown, cb: (err: null, res: object) => void) => cb(null, { id: 'rcp_x' }),
      });
      server.addService(Health.service, {
        Check: (_: unknown, cb: (err: null, res: object) => void) => cb(null, { status: 'SERVING' }),
      });
      servers.push(server);
      return serveGrpc(server, { host: '127.0.0.1', port: 0, tls, registry: new Registry(), logger });
    };
    // The fixture's certificate, presented by the caller, bears the names localhost and 127.0.0.1.
    const presenting = grpcClientTransport({
      GRPC_TLS_CA_FILE: fixture('ca.crt'),
      GRPC_TLS_CLIENT_CERT_FILE: fixture('server.crt'),
      GRPC_TLS_CLIENT_KEY_FILE: fixture('server.key'),
    }).credentials;
    const made: { close(): void }[] = [];
    const call = (port: number, method: 'GetRecipient' | 'Check', credentials = presenting) => {
      const c = internalClient(method === 'Check' ? Health : RecipientService, `127.0.0.1:${port}`, {
        token: TOKEN,
        credentials,
      });
      made.push(c);
      const request = method === 'Check' ? { service: '' } : { projectId: 'p', recipientId: 'rcp_x' };
      return callUnary<object, { id?: string; status?: string }>(c, method, request, {
        deadlineMs: 3000,
      }).then(
        (res) => res.id ?? res.status,
        (err) => err,
      );
    };
    try {
      expect(await call(await serve('outreach-gateway, LOCALHOST'), 'GetRecipient')).toBe('rcp_x');
      const refusing = await serve('outreach-gateway,outreach-link-runtime');
      const refused = await call(refusing, 'GetRecipient');
      expect(refused.code).toBe(status.PERMISSION_DENIED);
      // Its caller answers 503 without detail, and logs why.
      expect(fromServiceError(refused, 'req_1')).toMatchObject({
        code: 'unavailable',
        details: { requestId: 'req_1' },
      });
      expect((fromServiceError(refused).cause as Error).message).toBe(CLIENT_NAME_REFUSED);
      expect(
        lines.find(
          (l) => l.msg === 'grpc call refused: its client certificate bears none of GRPC_TLS_CLIENT_NAMES',
        ),
      ).toMatchObject({
        level: 40,
        names: ['localhost'],
        allowed: ['outreach-gateway', 'outreach-link-runtime'],
      });
      // Its health checks too, so that its dependency_up shows it refused.
      expect((await call(refusing, 'Check')).code).toBe(status.PERMISSION_DENIED);
      // A plaintext caller, let in for a rollout, bears no name at all.
      const both = await serve('localhost', true);
      expect((await call(both, 'GetRecipient', grpcClientTransport({}).credentials)).code).toBe(
        status.PERMISSION_DENIED,
      );
      expect(await call(both, 'GetRecipient')).toBe('rcp_x');
    } finally {
      for (const c of made) c.close();
      for (const s of servers) await closeGrpcServer(s, 1000);
    }
  });

  it('presents a renewed client certificate to new connections without a restart', async () => {
    const server = await healthServer(
      grpcServerTlsOf({ ...SERVER, GRPC_TLS_CLIENT_CA_FILE: fixture('other-ca.crt') }),
    );
    const files = serverFilesToRenew('GRPC_TLS_CLIENT_CERT_FILE', 'GRPC_TLS_CLIENT_KEY_FILE');
    const { logger, lines } = capturedLogger();
    const opened = new Opened();
    const registry = new Registry();
    const caller = openInternalCaller(
      opened,
      { GRPC_TLS_CA_FILE: fixture('ca.crt'), ...files },
      TOKEN,
      logger,
      registry,
      25,
    );
    const expiry = async () => (await registry.getSingleMetric(GRPC_CLIENT_TLS_EXPIRY_METRIC)?.get())?.values;
    const { Health } = loadHealthProto().grpc.health.v1;
    const made: ReturnType<typeof internalClient>[] = [];
    const newClient = () => {
      const c = internalClient(Health, `127.0.0.1:${server.port}`, caller, {
        'grpc.use_local_subchannel_pool': 1,
      });
      made.push(c);
      return c;
    };
    try {
      expect(await server.check(newClient())).toBe(status.UNAVAILABLE);
      // What the caller presents, as a caller that never takes up its renewal would go on showing.
      expect(await expiry()).toEqual([{ labels: {}, value: epochSeconds(grpcServerTlsOf(SERVER)) }]);
      replaceFile(files.GRPC_TLS_CLIENT_CERT_FILE, fixture('renewed.crt'));
      replaceFile(files.GRPC_TLS_CLIENT_KEY_FILE, fixture('renewed.key'));
      await until(() =>
        lines.some((l) => l.msg === 'new gRPC connections present the renewed client certificate'),
      );
      expect(await server.check(newClient())).toBe('SERVING');
      expect(await expiry()).toEqual([{ labels: {}, value: epochSeconds(grpcServerTlsOf(RENEWED)) }]);
      expect(lines.filter((l) => l.level >= 40)).toEqual([]);
    } finally {
      for (const c of made) c.close();
      const lifecycle = new Lifecycle(logger, 1000);
      opened.handTo(lifecycle);
      await lifecycle.shutdown('test');
      await server.close();
    }
  });

  it('checks client certificates and client CAs whole at start, every problem named', () => {
    expect(problemsOf(() => grpcServerTlsOf({ GRPC_TLS_CLIENT_CA_FILE: fixture('ca.crt') }))).toEqual([
      'GRPC_TLS_CLIENT_CA_FILE is set without GRPC_TLS_CERT_FILE and GRPC_TLS_KEY_FILE',
    ]);
    expect(
      problemsOf(() => grpcServerTlsOf({ ...SERVER, GRPC_TLS_CLIENT_CA_FILE: fixture('server.key') })),
    ).toEqual([`GRPC_TLS_CLIENT_CA_FILE (${fixture('server.key')}) holds no PEM certificate`]);
    expect(grpcServerTlsOf({ ...SERVER, GRPC_TLS_CLIENT_CA_FILE: fixture('ca.crt') })?.clientCa?.file).toBe(
      fixture('ca.crt'),
    );
    expect(problemsOf(() => grpcServerTlsOf({ GRPC_TLS_CLIENT_NAMES: 'outreach-gateway' }))).toEqual([
      'GRPC_TLS_CLIENT_NAMES is set without GRPC_TLS_CERT_FILE and GRPC_TLS_KEY_FILE',
    ]);
    expect(
      problemsOf(() =>
        grpcServerTlsOf({ ...SERVER, GRPC_TLS_CLIENT_NAMES: 'outreach-gateway, https://x, ,' }),
      ),
    ).toEqual([
      'GRPC_TLS_CLIENT_NAMES is set without GRPC_TLS_CLIENT_CA_FILE',
      'GRPC_TLS_CLIENT_NAMES holds "https://x", which is no DNS name',
    ]);
    expect(
      problemsOf(() =>
        grpcServerTlsOf({
          ...SERVER,
          GRPC_TLS_CLIENT_CA_FILE: fixture('ca.crt'),
          GRPC_TLS_CLIENT_NAMES: ' , ',
        }),
      ),
    ).toEqual(['GRPC_TLS_CLIENT_NAMES is set but names no service']);
    expect(
      grpcServerTlsOf({
        ...SERVER,
        GRPC_TLS_CLIENT_CA_FILE: fixture('ca.crt'),
        GRPC_TLS_CLIENT_NAMES: ' Outreach-Gateway ,outreach-link-runtime',
      })?.clientNames,
    ).toEqual(['outreach-gateway', 'outreach-link-runtime']);
    const cert = fixture('server.crt');
    expect(problemsOf(() => grpcClientTransport({ GRPC_TLS_CLIENT_CERT_FILE: cert }))).toEqual([
      'GRPC_TLS_CLIENT_CERT_FILE is set without GRPC_TLS_CA_FILE',
      'GRPC_TLS_CLIENT_CERT_FILE is set without GRPC_TLS_CLIENT_KEY_FILE',
    ]);
    expect(
      problemsOf(() =>
        grpcClientTransport({
          GRPC_TLS_CA_FILE: fixture('ca.crt'),
          GRPC_TLS_CLIENT_CERT_FILE: cert,
          GRPC_TLS_CLIENT_KEY_FILE: fixture('renewed.key'),
        }),
      ),
    ).toEqual([
      'GRPC_TLS_CLIENT_KEY_FILE is not the private key of the certificate in GRPC_TLS_CLIENT_CERT_FILE',
    ]);
    expect(
      problemsOf(() =>
        grpcClientTransport(
          {
            GRPC_TLS_CA_FILE: fixture('ca.crt'),
            GRPC_TLS_CLIENT_CERT_FILE: cert,
            GRPC_TLS_CLIENT_KEY_FILE: fixture('server.key'),
          },
          () => new Date('2200-01-01T00:00:00Z'),
        ),
      )[0],
    ).toMatch(/^the certificate in GRPC_TLS_CLIENT_CERT_FILE expired on 2126-/);
  });
});
