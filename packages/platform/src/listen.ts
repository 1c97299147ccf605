import type { Server as HttpServer, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Server as GrpcServer } from '@grpc/grpc-js';
import {
  type EitherTransportListener,
  type GrpcTransport,
  listenEitherTransport,
} from './grpc-either-transport';
import { type GrpcServerTls, grpcServerCredentials } from './grpc-tls';
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
 * Stops accepting, closes idle keep-alive sockets, has each busy one answer with
 * `Connection: close` (so a client or proxy never sends another request on a connection about to
 * close) and close once answered, and resolves once every connection has ended.
 */
export function closeServer(server: HttpServer): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    // The response in flight on each connection (Node's own field for it), and any request yet
    // to come on one before it closes.
    for (const socket of connections.get(server) ?? [])
      closingAfter((socket as Socket & { _httpMessage?: ServerResponse })._httpMessage);
    // Ahead of the app's own listener, which may answer before it returns (a cached page).
    server.prependListener('request', (_req, res: ServerResponse) => closingAfter(res));
    const idle = setInterval(() => server.closeIdleConnections(), DRAIN_IDLE_CHECK_MS);
    server.close(() => {
      clearInterval(idle);
      resolve();
    });
    server.closeIdleConnections();
  });
}

// The listeners of gRPC servers that accept TLS and plaintext, which their shutdown closes first.
const eitherTransport = new WeakMap<GrpcServer, EitherTransportListener>();

/**
 * Binds a gRPC server, over TLS with `tls` (see `grpcServerTlsOf`), and resolves with the bound
 * port. When `tls` accepts plaintext too, each connection is told to `onConnection` by its transport.
 */
export async function bindGrpc(
  server: GrpcServer,
  host: string,
  port: number,
  tls?: GrpcServerTls,
  onConnection?: (transport: GrpcTransport) => void,
): Promise<number> {
  if (tls?.acceptPlaintext) {
    const credentials = { tls: grpcServerCredentials(tls), plaintext: grpcServerCredentials(undefined) };
    const listener = await listenEitherTransport(server, host, port, credentials, onConnection);
    eitherTransport.set(server, listener);
    return listener.port;
  }
  return new Promise((resolve, reject) =>
    server.bindAsync(`${host}:${port}`, grpcServerCredentials(tls), (err, bound) =>
      err ? reject(err) : resolve(bound),
    ),
  );
}

/** Lets in-flight calls finish for up to `graceMs`, then cancels what is left and stops. */
export async function closeGrpcServer(server: GrpcServer, graceMs: number): Promise<void> {
  eitherTransport.get(server)?.close();
  await within(new Promise<void>((resolve) => server.tryShutdown(() => resolve())), graceMs);
  server.forceShutdown();
}
