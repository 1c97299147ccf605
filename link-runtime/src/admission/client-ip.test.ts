import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { clientAddress, ipAllowed, requestAddress } from './client-ip';

describe('client address and allow-lists', () => {
  it('uses the socket address unless a trusted proxy forwards one', () => {
    expect(clientAddress('::ffff:10.1.2.3', '203.0.113.9', false)).toBe('10.1.2.3');
    expect(clientAddress('10.0.0.1', '203.0.113.9', true)).toBe('203.0.113.9');
    expect(clientAddress('10.0.0.1', '', true)).toBe('10.0.0.1');
  });

  it('takes the entry the trusted proxies appended, never one the client wrote before them', () => {
    // The client sent "198.51.100.1"; the one proxy appended the address it was reached from.
    expect(clientAddress('10.0.0.1', '198.51.100.1, 203.0.113.9', true)).toBe('203.0.113.9');
    // Two proxies, each appending: the client is two entries from the end.
    expect(clientAddress('10.0.0.1', '198.51.100.1, 203.0.113.9, 10.0.0.7', true, 2)).toBe('203.0.113.9');
    // Fewer entries than proxies: the first there is.
    expect(clientAddress('10.0.0.1', '203.0.113.9', true, 2)).toBe('203.0.113.9');
  });

  it("reads a request's socket and X-Forwarded-For the same way", async () => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(
        requestAddress(req, { trustProxy: false, trustedHops: 1 }),
        requestAddress(req, { trustProxy: true, trustedHops: 1 }),
      );
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      await fetch(`http://127.0.0.1:${port}/`, {
        headers: { 'x-forwarded-for': '198.51.100.1, 203.0.113.9' },
      });
      await fetch(`http://127.0.0.1:${port}/`);
    } finally {
      server.close();
    }
    expect(seen).toEqual(['127.0.0.1', '203.0.113.9', '127.0.0.1', '127.0.0.1']);
  });

  it('matches IPv4 and IPv6 CIDR blocks; an empty list allows all', () => {
    expect(ipAllowed('1.2.3.4', [])).toBe(true);
    expect(ipAllowed('10.20.30.40', ['10.0.0.0/8'])).toBe(true);
    expect(ipAllowed('11.0.0.1', ['10.0.0.0/8'])).toBe(false);
    expect(ipAllowed('192.168.1.7', ['192.168.1.7'])).toBe(true);
    expect(ipAllowed('2001:db8::1', ['2001:db8::/32'])).toBe(true);
    expect(ipAllowed('2001:db9::1', ['2001:db8::/32'])).toBe(false);
    expect(ipAllowed('not-an-ip', ['0.0.0.0/0'])).toBe(false);
  });
});
