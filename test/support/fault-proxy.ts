import { connect, createServer, type Server, type Socket } from 'node:net';
import { freePort } from './system';

/** A TCP proxy in front of a real server that a test can cut off and restore. */
export interface FaultProxy {
  port: number;
  /** Drops every connection and refuses new ones, as a server gone from the network would. */
  cut(): Promise<void>;
  /** Accepts connections again, on the same port (nothing to do while it does). */
  restore(): Promise<void>;
  close(): Promise<void>;
}

/** Proxies a free local port to `target` (host and port). */
export async function startFaultProxy(target: { host: string; port: number }): Promise<FaultProxy> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  const listen = async () => {
    if (server) return;
    const s = createServer((client) => {
      const upstream = connect(target.port, target.host);
      for (const [a, b] of [
        [client, upstream],
        [upstream, client],
      ]) {
        sockets.add(a);
        a.pipe(b);
        a.on('error', () => b.destroy());
        a.on('close', () => {
          sockets.delete(a);
          b.destroy();
        });
      }
    });
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => resolve());
    });
    server = s;
  };
  const cut = async () => {
    const s = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    if (s) await new Promise((resolve) => s.close(resolve));
  };
  await listen();
  return { port, cut, restore: listen, close: cut };
}
