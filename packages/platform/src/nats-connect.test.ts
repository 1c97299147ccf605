import pino from 'pino';
import { type PrivateStore, startPrivateStore } from '../../../test/support/private-store';
import { connectNats } from './nats';

let nats: PrivateStore;

beforeAll(async () => {
  nats = await startPrivateStore('nats');
});

afterAll(async () => {
  await nats?.remove();
});

describe('connectNats', () => {
  it('waits for a server that is down when it starts, saying so, and connects once it is up', async () => {
    await nats.kill();
    const lines: { msg: string; servers?: string[] }[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    // With a user in the URL, which a log line must not show.
    const url = nats.url.replace('nats://', 'nats://someone:secret@');
    const connecting = connectNats(url, 'test', logger);
    let connected = false;
    void connecting.then(() => {
      connected = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(connected).toBe(false);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines[0]).toMatchObject({
      msg: 'NATS not reachable yet; trying again',
      servers: [nats.url.replace('nats://', '')],
    });
    expect(JSON.stringify(lines)).not.toContain('secret');

    await nats.restart();
    const nc = await connecting;
    try {
      expect(nc.isClosed()).toBe(false);
      await nc.flush();
    } finally {
      await nc.close();
    }
  });

  it('waits, too, for a server whose name does not resolve yet', async () => {
    const lines: { msg: string }[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    let settled = '';
    const stop = new AbortController();
    // .invalid never resolves (RFC 6761): what a StatefulSet pod's name does while the pod is gone.
    const connecting = connectNats('nats://nats-0.outreach-test.invalid:4222', 'test', logger, {
      signal: stop.signal,
    });
    connecting.then(
      (nc) => {
        settled = 'connected';
        void nc.close();
      },
      (err: { code?: string }) => {
        settled = `gave up: ${err.code}`;
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(settled).toBe('');
    expect(lines[0]).toMatchObject({ msg: 'NATS not reachable yet; trying again' });
    // Stopped, it gives up waiting.
    stop.abort();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(settled).toMatch(/^gave up/);
  });
});
