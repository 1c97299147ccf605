import { Agent, createServer, get } from 'node:http';
import { connect, type Socket } from 'node:net';
import { closeServer, listen } from './listen';
import { TIMED_OUT, within } from './within';

/** Opens a TCP connection to `port` and resolves once it is open, having sent nothing. */
function silentConnection(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket)).once('error', reject);
  });
}

describe('listen', () => {
  it('rejects a taken port', async () => {
    const first = createServer();
    const port = await listen(first, 0, '127.0.0.1');
    try {
      await expect(listen(createServer(), port, '127.0.0.1')).rejects.toMatchObject({ code: 'EADDRINUSE' });
    } finally {
      await closeServer(first);
    }
  });

  it('keeps idle connections longer than a proxy in front does (60 s), with a longer headers timeout', async () => {
    const server = createServer();
    await listen(server, 0, '127.0.0.1');
    try {
      expect(server.keepAliveTimeout).toBeGreaterThan(60_000);
      expect(server.headersTimeout).toBeGreaterThan(server.keepAliveTimeout);
    } finally {
      await closeServer(server);
    }
  });

  it('closes a keep-alive connection once the response in flight at the drain is sent, not after the keep-alive time', async () => {
    const server = createServer((_req, res) => setTimeout(() => res.end('ok'), 300));
    const port = await listen(server, 0, '127.0.0.1');
    const agent = new Agent({ keepAlive: true });
    try {
      const answered = new Promise<{ status: number; connection?: string }>((resolve, reject) =>
        get({ port, host: '127.0.0.1', agent }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
        }).on('error', reject),
      );
      await new Promise((r) => setTimeout(r, 50));
      const began = Date.now();
      await closeServer(server);
      expect(Date.now() - began).toBeLessThan(1000);
      // Told so, the client sends nothing more on a connection about to close.
      expect(await answered).toEqual({ status: 200, connection: 'close' });
    } finally {
      agent.destroy();
    }
  });

  it('closes a connection that never sent a request (a browser preconnect, a load balancer) instead of waiting for it', async () => {
    const server = createServer((_req, res) => res.end('ok'));
    const port = await listen(server, 0, '127.0.0.1');
    const silent = await silentConnection(port);
    const ended = new Promise((resolve) => silent.once('close', resolve));
    try {
      // Node counts such a connection as busy, not idle, and close() stops timing it out: close()
      // alone waits until the peer hangs up.
      expect(await within(closeServer(server), 10_000)).not.toBe(TIMED_OUT);
      await ended;
    } finally {
      silent.destroy();
    }
  });

  it('answers a request sent on a connection opened just before the drain, with Connection: close', async () => {
    const server = createServer((_req, res) => res.end('ok'));
    const port = await listen(server, 0, '127.0.0.1');
    const late = await silentConnection(port);
    const answer = new Promise<string>((resolve) => {
      let text = '';
      late.on('data', (chunk) => {
        text += chunk.toString('latin1');
      });
      late.once('close', () => resolve(text));
    });
    const closed = closeServer(server);
    late.write('GET / HTTP/1.1\r\nHost: outreach.test\r\n\r\n');
    const said = await within(answer, 10_000).finally(() => late.destroy());
    await closed;
    if (said === TIMED_OUT) throw new Error('no answer within 10 s');
    expect(said).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(said.toLowerCase()).toContain('connection: close\r\n');
    expect(said.endsWith('\r\n\r\nok')).toBe(true);
  });

  it('keeps serving through later server errors (an accept failing with EMFILE) instead of crashing', async () => {
    const server = createServer((_req, res) => res.end('ok'));
    const port = await listen(server, 0, '127.0.0.1');
    try {
      // An 'error' event with no listener is thrown: this would crash the process.
      for (let i = 0; i < 2; i++)
        server.emit('error', Object.assign(new Error('accept EMFILE'), { code: 'EMFILE' }));
      expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('ok');
    } finally {
      await closeServer(server);
    }
  });
});
