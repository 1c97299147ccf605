import { createServer, type Server } from 'node:net';
import { freePort } from './support/system';

// scripts/ is plain JavaScript, run by node directly.
const { waitForPorts } = require('../scripts/lib/wait') as {
  waitForPorts: (
    ports: { name: string; port: number }[],
    options: { host?: string; timeoutMs?: number; say?: (line: string) => void },
  ) => Promise<void>;
};

const hold = (port: number) =>
  new Promise<Server>((resolve) => {
    const server = createServer().listen(port, '127.0.0.1', () => resolve(server));
  });
const release = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

describe("npm start's wait for its ports", () => {
  it('waits for a port held a moment, saying so once, and goes on once it is free', async () => {
    const port = await freePort();
    const holder = await hold(port);
    const said: string[] = [];
    const waited = waitForPorts([{ name: 'LINK_PORT', port }], {
      host: '127.0.0.1',
      say: (l) => said.push(l),
    });
    setTimeout(() => void release(holder), 600);
    await expect(waited).resolves.toBeUndefined();
    expect(said).toEqual([`  port ${port} (LINK_PORT) is in use; waiting for it to free up...`]);
  });

  it('names the port and the variable that moves it when the port stays taken', async () => {
    const port = await freePort();
    const holder = await hold(port);
    try {
      await expect(
        waitForPorts([{ name: 'CAMPAIGN_GRPC_PORT', port }], {
          host: '127.0.0.1',
          timeoutMs: 300,
          say: () => {},
        }),
      ).rejects.toThrow(
        `port ${port} is in use: stop what holds it (ss -ltnp 'sport = :${port}'), or set CAMPAIGN_GRPC_PORT to another port`,
      );
    } finally {
      await release(holder);
    }
  });

  it('says nothing when every port is free', async () => {
    const said: string[] = [];
    await waitForPorts([{ name: 'GATEWAY_PORT', port: await freePort() }], {
      host: '127.0.0.1',
      say: (l) => said.push(l),
    });
    expect(said).toEqual([]);
  });
});
