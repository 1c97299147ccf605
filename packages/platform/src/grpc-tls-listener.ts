import { createServer, type Server as NetServer, type Socket } from 'node:net';
import type { ConnectionInjector, Server as GrpcServer, ServerCredentials } from '@grpc/grpc-js';

/** How a caller reached a gRPC server over TLS: the transport it spoke. */
export type GrpcTransport = 'tls' | 'plaintext';

/** The first byte of a TLS record carrying a handshake; a plaintext gRPC caller starts with "PRI". */
const TLS_HANDSHAKE = 0x16;

// Both kinds of caller speak first (a ClientHello, or the HTTP/2 preface), so a connection silent
// this long is no gRPC caller: it is closed rather than held for ever.
const FIRST_BYTES_WITHIN_MS = 10_000;

/** What a gRPC server over TLS serves with: its credentials, and whether plaintext callers are taken too. */
export interface GrpcTlsListenerOptions {
  tls: ServerCredentials;
  /** Credentials for plaintext callers, who are refused without them. */
  plaintext?: ServerCredentials;
  /** Told of each connection: the transport its caller spoke, and whether it was taken or refused. */
  onConnection?: (transport: GrpcTransport, taken: boolean) => void;
}

/** The listener of a gRPC server over TLS (see listenGrpcTls). */
export interface GrpcTlsListener {
  port: number;
  /** Serves new connections with these credentials (a renewed certificate); those open keep theirs. */
  useTls(credentials: ServerCredentials): void;
  /** Stops accepting and closes the connections not yet handed over; the gRPC server's shutdown closes the rest. */
  close(): void;
}

/**
 * Listens on `port` at `host` for a gRPC server over TLS, handing each connection to it by the
 * first byte the caller sends: a TLS handshake to the server's current TLS credentials, anything
 * else to its plaintext ones when it takes plaintext too (for the rollout that turns TLS on or
 * off), else closed. Owning the listener is what lets a renewed certificate be served without a
 * restart: new connections go to the newest credentials while open ones go on.
 */
export function listenGrpcTls(
  grpc: GrpcServer,
  host: string,
  port: number,
  options: GrpcTlsListenerOptions,
): Promise<GrpcTlsListener> {
  let tls = grpc.createConnectionInjector(options.tls);
  const plaintext: ConnectionInjector | undefined =
    options.plaintext && grpc.createConnectionInjector(options.plaintext);
  const waiting = new Set<Socket>();
  const server: NetServer = createServer((socket) => {
    waiting.add(socket);
    const dropped = () => socket.destroy();
    socket.setTimeout(FIRST_BYTES_WITHIN_MS, dropped);
    // Without it, a caller resetting before its first bytes would crash the process.
    socket.once('error', dropped);
    socket.once('close', () => waiting.delete(socket));
    socket.once('data', (first: Buffer) => {
      waiting.delete(socket);
      // Its timer and listener both go: the server may set a timeout of its own on the socket.
      socket.setTimeout(0);
      socket.off('timeout', dropped);
      const transport: GrpcTransport = first[0] === TLS_HANDSHAKE ? 'tls' : 'plaintext';
      const injector = transport === 'tls' ? tls : plaintext;
      options.onConnection?.(transport, injector !== undefined);
      if (!injector) return socket.destroy();
      socket.off('error', dropped);
      // Given back, so the server reads the connection from its first byte.
      socket.pause();
      socket.unshift(first);
      injector.injectConnection(socket);
    });
  });
  return new Promise((resolve, reject) => {
    // Kept once listening, as listen() does: a later accept error goes to the settled promise.
    server.on('error', reject);
    server.listen(port, host, () => {
      const address = server.address();
      resolve({
        port: typeof address === 'object' && address ? address.port : port,
        // The injector before it stays with the server, which closes its sessions at shutdown.
        useTls: (credentials) => {
          tls = grpc.createConnectionInjector(credentials);
        },
        close: () => {
          server.close();
          for (const socket of waiting) socket.destroy();
        },
      });
    });
  });
}
