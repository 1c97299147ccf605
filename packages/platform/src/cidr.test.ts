import { compileAllowList, ipInAllowList, parseCidr } from './cidr';

describe('parseCidr', () => {
  it('parses IPv4 and IPv6 blocks and bare addresses', () => {
    expect(parseCidr('10.0.0.0/8')).toEqual({ address: '10.0.0.0', prefix: 8, family: 'ipv4' });
    expect(parseCidr('2001:db8::/32')).toEqual({ address: '2001:db8::', prefix: 32, family: 'ipv6' });
    expect(parseCidr('192.168.1.7')).toEqual({ address: '192.168.1.7', prefix: 32, family: 'ipv4' });
    expect(parseCidr('::1')).toEqual({ address: '::1', prefix: 128, family: 'ipv6' });
    expect(parseCidr('0.0.0.0/0')?.prefix).toBe(0);
  });

  it.each([
    '',
    '10.0.0.0/33',
    '2001:db8::/129',
    '10.0.0/8',
    '256.0.0.1/8',
    '10.0.0.0/',
    '10.0.0.0/ 8',
    '10.0.0.0/0x8',
    '10.0.0.0/8/8',
    'example.com/24',
    'fe80::1%eth0/64',
  ])('refuses %j', (text) => {
    expect(parseCidr(text)).toBeNull();
  });
});

describe('ipInAllowList', () => {
  it('allows everything when the list is empty', () => {
    expect(ipInAllowList('203.0.113.9', [])).toBe(true);
    expect(ipInAllowList('2001:db8::1', [])).toBe(true);
  });

  it('matches IPv4 blocks, including IPv4-mapped IPv6 clients', () => {
    const list = ['10.0.0.0/8', '192.168.1.7'];
    expect(ipInAllowList('10.200.3.4', list)).toBe(true);
    expect(ipInAllowList('11.0.0.1', list)).toBe(false);
    expect(ipInAllowList('192.168.1.7', list)).toBe(true);
    expect(ipInAllowList('192.168.1.8', list)).toBe(false);
    expect(ipInAllowList('::ffff:10.1.2.3', list)).toBe(true);
    expect(ipInAllowList('::ffff:11.1.2.3', list)).toBe(false);
  });

  it('matches IPv6 blocks and keeps families apart', () => {
    const list = ['2001:db8::/32'];
    expect(ipInAllowList('2001:db8:ffff::1', list)).toBe(true);
    expect(ipInAllowList('2001:db9::1', list)).toBe(false);
    expect(ipInAllowList('10.0.0.1', list)).toBe(false);
  });

  it('refuses addresses that are not IPs when a list is set', () => {
    expect(compileAllowList(['0.0.0.0/0']).allows('not-an-ip')).toBe(false);
    expect(compileAllowList(['0.0.0.0/0']).allows('8.8.8.8')).toBe(true);
  });
});
