import type { Server as HttpServer, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Server as GrpcServer } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import {
  GRPC_TLS_CHECK_MS,
  type GrpcServerTls,
  grpcServerCredentials,
  registerGrpcTlsMetrics,
  renewedGrpcServerTls,
  tlsFilesCheck,
} from './grpc-tls';
import { type GrpcTlsListener, listenGrpcTls } from './grpc-tls-listener';
import { runPeriodically } from './periodic';
import { within } from './within';

// An idle keep-alive connection is kept longer than a proxy in front keeps its own (ingress-nginx:
// 60 s). With Node's 5 s the server closes a connection the proxy may be sending a request on at
// that instant, which the proxy answers 502 and does not retry when it is a POST (a start). The
// headers timeout must exceed it, or a connection reused near its end is cut mid-request.
const KEEP_ALIVE_MS = 65_000;
const HEADERS_TIMEOUT_MS = 66_000;

// While a server drains, a connection whose response was in flight at close() becomes idle when it
// is answered and would then stay open for the keep-alive time: it is closed this soon instead.
const DRAIN_IDLE_CHECK_MS = 50;

// A connection that has sent nothing by the drain (a browser's preconnect, a load balancer's spare)
// is no idle keep-alive to Node, and close() stops the checks that would time it out: close()
// would wait for it until its peer hangs up, past the shutdown deadline. It is closed if still
// silent this long after, time for a request already on its way to arrive.
const SILENT_GRACE_MS = 500;

// Each server's open connections, so that a drain can tell the response in flight on each to close
// its connection (per connection, not per request: keep-alive connections carry many).
const connections = new WeakMap<HttpServer, Set<Socket>>();

/** Listens on `port` at `host` and resolves with the bound port; rejects on EADDRINUSE and the like. */
export function listen(server: HttpServer, port: number, host: string): Promise<number> {
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  const open = new Set<Socket>();
  connections.set(server, open);
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  return new Promise((resolve, reject) => {
    // Without a listener the error would be thrown from the event loop and this never settle.
    // It stays attached once listening: a later accept error (EMFILE while sockets pile up) then
    // goes to the settled promise instead of crashing the process, and the server goes on.
    server.on('error', reject);
    server.listen(port, host, () => {
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
}

/** Has a response end its connection after it, saying so (`Connection: close`), when still possible. */
function closingAfter(res: ServerResponse | undefined): void {
  if (res && !res.headersSent) res.setHeader('Connection', 'close');
}

/**
 * Stops accepting, closes idle keep-alive sockets and, after a short grace, those that never sent
 * a byte; has each busy one answer with `Connection: close` (so a client or proxy never sends
 * another request on a connection about to close) and close once answered, and resolves once
 * every connection has ended.
 */
export function closeServer(server: HttpServer): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    const open = connections.get(server) ?? new Set<Socket>();
    // The response in flight on each connection (Node's own field for it), and any request yet
    // to come on one before it closes.
    for (const socket of open)
      closingAfter((socket as Socket & { _httpMessage?: ServerResponse })._httpMessage);
    // Ahead of the app's own listener, which may answer before it returns (a cached page).
    server.prependListener('request', (_req, res: ServerResponse) => closingAfter(res));
    const idle = setInterval(() => server.closeIdleConnections(), DRAIN_IDLE_CHECK_MS);
    const silent = setTimeout(() => {
      for (const socket of open) if (socket.bytesRead === 0) socket.destroy();
    }, SILENT_GRACE_MS);
    server.close(() => {
      clearInterval(idle);
      clearTimeout(silent);
      resolve();
    });
    server.closeIdleConnections();
  });
}

// What the shutdown of a gRPC server over TLS stops before the server itself (see serveGrpc).
const overTls = new WeakMap<GrpcServer, { listener: GrpcTlsListener; stopChecks: () => Promise<void> }>();

/** Binds a gRPC server in plaintext and resolves with the bound port. */
export function bindGrpc(server: GrpcServer, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) =>
    server.bindAsync(`${host}:${port}`, grpcServerCredentials(undefined), (err, bound) =>
      err ? reject(err) : resolve(bound),
    ),
  );
}

/** Where and how serveGrpc serves. */
export interface GrpcServing {
  host: string;
  port: number;
  /** Its certificate (see grpcServerTlsOf); plaintext without. */
  tls: GrpcServerTls | undefined;
  registry: Registry;
  logger: Logger;
  /** How often the certificate files are read for a renewal (30 s; tests shorten it). */
  certificateCheckMs?: number;
}

/**
 * Serves a gRPC server, in plaintext or over TLS with its certificate (and its callers' CAs),
 * which it reads again every 30 s: once renewed, new connections are served with the new one, no
 * restart needed, while files that no longer hold a valid pair leave it serving the one before
 * (logged). Exports the TLS metrics (registerGrpcTlsMetrics) and resolves with the bound port;
 * closeGrpcServer stops it all.
 */
export async function serveGrpc(server: GrpcServer, serving: GrpcServing): Promise<number> {
  const { host, port, logger } = serving;
  const metrics = registerGrpcTlsMetrics(serving.registry);
  metrics.serving(serving.tls);
  if (!serving.tls) return bindGrpc(server, host, port);
  let current = serving.tls;
  const listener = await listenGrpcTls(server, host, port, {
    tls: grpcServerCredentials(current),
    plaintext: current.acceptPlaintext ? grpcServerCredentials(undefined) : undefined,
    onConnection: metrics.connection,
  });
  const checkRenewal = tlsFilesCheck(
    () => renewedGrpcServerTls(current),
    (renewed) => {
      listener.useTls(grpcServerCredentials(renewed));
      const certificateRenewed = !renewed.cert.equals(current.cert) || !renewed.key.equals(current.key);
      current = renewed;
      metrics.serving(renewed);
      if (certificateRenewed)
        logger.info({ notAfter: renewed.notAfter.toISOString() }, 'serving the renewed gRPC certificate');
      else logger.info('asking new gRPC callers for certificates of the changed client CA file');
    },
    logger,
    'the gRPC certificate files hold no valid certificate and key; still serving the one before',
  );
  const stopChecks = runPeriodically(
    checkRenewal,
    serving.certificateCheckMs ?? GRPC_TLS_CHECK_MS,
    logger,
    'checking the gRPC certificate for a renewal failed',
  );
  overTls.set(server, { listener, stopChecks });
  return listener.port;
}

/** Lets in-flight calls finish for up to `graceMs`, then cancels what is left and stops. */
export async function closeGrpcServer(server: GrpcServer, graceMs: number): Promise<void> {
  const tls = overTls.get(server);
  tls?.listener.close();
  await tls?.stopChecks();
  await within(new Promise<void>((resolve) => server.tryShutdown(() => resolve())), graceMs);
  server.forceShutdown();
}
