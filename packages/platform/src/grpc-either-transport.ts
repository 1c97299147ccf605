import { createServer, type Server as NetServer, type Socket } from 'node:net';
import type { Server as GrpcServer, ServerCredentials } from '@grpc/grpc-js';

/** How a caller reached a gRPC server that accepts both. */
export type GrpcTransport = 'tls' | 'plaintext';

/** The first byte of a TLS record carrying a handshake; a plaintext gRPC caller starts with "PRI". */
const TLS_HANDSHAKE = 0x16;

// Both kinds of caller speak first (a ClientHello, or the HTTP/2 preface), so a connection silent
// this long is no gRPC caller: it is closed rather than held for ever.
const FIRST_BYTES_WITHIN_MS = 10_000;

/** A listener that hands each connection to a gRPC server over TLS or plaintext (see listenEitherTransport). */
export interface EitherTransportListener {
  port: number;
  /** Stops accepting and closes the connections not yet handed over; the gRPC server's shutdown closes the rest. */
  close(): void;
}

/**
 * Listens on `port` at `host` for a gRPC server that serves TLS and plaintext callers on one port,
 * told apart by the first byte each sends: for the rollout that turns TLS on or off, when some
 * callers speak the one while others already speak the other.
 */
export function listenEitherTransport(
  grpc: GrpcServer,
  host: string,
  port: number,
  credentials: Record<GrpcTransport, ServerCredentials>,
  onConnection: (transport: GrpcTransport) => void = () => {},
): Promise<EitherTransportListener> {
  const injectors = {
    tls: grpc.createConnectionInjector(credentials.tls),
    plaintext: grpc.createConnectionInjector(credentials.plaintext),
  };
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
      socket.setTimeout(0);
      socket.off('error', dropped);
      // Given back, so the server reads the connection from its first byte.
      socket.pause();
      socket.unshift(first);
      const transport: GrpcTransport = first[0] === TLS_HANDSHAKE ? 'tls' : 'plaintext';
      onConnection(transport);
      injectors[transport].injectConnection(socket);
    });
  });
  return new Promise((resolve, reject) => {
    // Kept once listening, as listen() does: a later accept error goes to the settled promise.
    server.on('error', reject);
    server.listen(port, host, () => {
      const address = server.address();
      resolve({
        port: typeof address === 'object' && address ? address.port : port,
        close: () => {
          server.close();
          for (const socket of waiting) socket.destroy();
        },
      });
    });
  });
}
