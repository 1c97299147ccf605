import type { Server as HttpServer } from 'node:http';
import { type Server as GrpcServer, ServerCredentials } from '@grpc/grpc-js';
import { within } from './within';

/** Listens on `port` at `host` and resolves with the bound port; rejects on EADDRINUSE and the like. */
export function listen(server: HttpServer, port: number, host: string): Promise<number> {
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

/** Stops accepting, closes idle keep-alive sockets, and resolves once every connection has ended. */
export function closeServer(server: HttpServer): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}

/** Binds a plaintext gRPC server, as every service's is, and resolves with the bound port. */
export function bindGrpc(server: GrpcServer, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) =>
    server.bindAsync(`${host}:${port}`, ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    ),
  );
}

/** Lets in-flight calls finish for up to `graceMs`, then cancels what is left and stops. */
export async function closeGrpcServer(server: GrpcServer, graceMs: number): Promise<void> {
  await within(new Promise<void>((resolve) => server.tryShutdown(() => resolve())), graceMs);
  server.forceShutdown();
}
