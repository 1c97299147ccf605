import { credentials } from '@grpc/grpc-js';
import { loadRecipientsProto, type RecipientMessage } from '@outreach/contracts';
import { Registry } from 'prom-client';
import { registerRecipientCache } from '../src/metrics';
import { RecipientCache } from '../src/state/recipient.cache';
import { TestResolveLinkServer } from './support/resolve-link-server';

// The cache in front of ResolveLink, over real gRPC: bounded in memory, expired entries dropped.
let server: TestResolveLinkServer;
let client: InstanceType<ReturnType<typeof loadRecipientsProto>['outreach']['v1']['RecipientService']>;

const recipient = (i: number, instructions = 'x'.repeat(1000)): RecipientMessage => ({
  id: `rcp_${i}`,
  campaignId: 'cmp_1',
  projectId: 'prj_1',
  metadata: { tier: 'gold' },
  deviceId: 'dev_1',
  isActive: true,
  link: `http://link/i/token${i}xxxxxxxx`,
  injectionMode: 'append',
  injectionInstructions: instructions,
  interactionCount: 0,
  distillationStatus: 'none',
  createdAt: '2026-11-26T00:00:00.000Z',
});
const token = (i: number) => `token${i}xxxxxxxx`;

beforeAll(async () => {
  server = new TestResolveLinkServer();
  for (let i = 0; i < 100; i++) server.recipients.set(token(i), recipient(i));
  const address = await server.start();
  client = new (loadRecipientsProto().outreach.v1.RecipientService)(address, credentials.createInsecure());
});

afterAll(async () => {
  client?.close();
  await server?.stop();
});

beforeEach(() => {
  server.calls = 0;
});

it('keeps at most its byte budget, dropping the least recently opened links first', async () => {
  // Each entry holds about 2.5 KB (1,000 characters of instructions and the rest): room for ~8.
  const cache = new RecipientCache(client, 60_000, 20_000);
  for (let i = 0; i < 100; i++) expect((await cache.resolve(token(i)))?.id).toBe(`rcp_${i}`);
  // Made-up tokens are remembered as absent, and count against the same budget.
  for (let i = 0; i < 50; i++) expect(await cache.resolve(`madeup${i}xxxxxxxx`)).toBeNull();
  expect(server.calls).toBe(150);
  const { entries, bytes } = cache.stats;
  expect(bytes).toBeLessThanOrEqual(20_000);
  expect(entries).toBeGreaterThan(0);
  expect(entries).toBeLessThan(150);

  // A link opened again stays; the one opened longest ago goes.
  await cache.resolve(token(99));
  for (let i = 0; i < 3; i++) await cache.resolve(`other${i}xxxxxxxxx`);
  expect(cache.peek(token(99))?.id).toBe('rcp_99');
  expect(cache.peek(token(0))).toBeUndefined();
  const before = server.calls;
  expect((await cache.resolve(token(0)))?.id).toBe('rcp_0');
  expect(server.calls).toBe(before + 1);
});

it('forgets an entry once its lifetime is over instead of keeping it', async () => {
  let now = 0;
  const cache = new RecipientCache(client, 1000, 1_000_000, () => now);
  await cache.resolve(token(1));
  await cache.resolve(token(2));
  expect(cache.stats.entries).toBe(2);
  now = 1000;
  expect(cache.peek(token(1))).toBeUndefined();
  expect(cache.stats.entries).toBe(1);
  expect((await cache.resolve(token(1)))?.id).toBe('rcp_1');
  expect(server.calls).toBe(3);
});

it('still drops a recipient by id after its entry was evicted and cached again', async () => {
  const cache = new RecipientCache(client, 60_000, 6_000);
  await cache.resolve(token(5));
  // Push token 5 out, then bring it back.
  for (let i = 10; i < 20; i++) await cache.resolve(token(i));
  expect(cache.peek(token(5))).toBeUndefined();
  await cache.resolve(token(5));
  expect(cache.peek(token(5))?.id).toBe('rcp_5');
  cache.invalidate(undefined, 'rcp_5');
  expect(cache.peek(token(5))).toBeUndefined();
});

it('shows its size in the gauges when scraped', async () => {
  const cache = new RecipientCache(client, 60_000, 1_000_000);
  const registry = new Registry();
  registerRecipientCache(registry, cache);
  const value = async (name: string) => (await registry.getSingleMetric(name)?.get())?.values[0]?.value;
  expect(await value('link_recipient_cache_entries')).toBe(0);
  await cache.resolve(token(1));
  await cache.resolve('madeupxxxxxxxxxx');
  expect(await value('link_recipient_cache_entries')).toBe(2);
  expect(await value('link_recipient_cache_bytes')).toBe(cache.stats.bytes);
  expect(cache.stats.bytes).toBeGreaterThan(2000);
});

describe('first opens of many links at once (a launch)', () => {
  it('share one ResolveLinks call, in order, made-up tokens answered as absent', async () => {
    server.batches = [];
    const cache = new RecipientCache(client, 60_000, 1_000_000);
    const tokens = [token(30), 'madeup1xxxxxxxxx', token(31), token(30), token(32)];
    const found = await Promise.all(tokens.map((t) => cache.resolve(t)));
    expect(found.map((r) => r?.id ?? null)).toEqual(['rcp_30', null, 'rcp_31', 'rcp_30', 'rcp_32']);
    // One call for all; the token asked twice is asked once (the misses of a token share a call).
    expect(server.batches).toEqual([[token(30), 'madeup1xxxxxxxxx', token(31), token(32)]]);
    expect(server.calls).toBe(0);
    // All are cached, the made-up token as absent.
    expect(cache.peek(token(31))?.id).toBe('rcp_31');
    expect(cache.peek('madeup1xxxxxxxxx')).toBeNull();
    // A lone miss still makes its own ResolveLink call.
    expect((await cache.resolve(token(33)))?.id).toBe('rcp_33');
    expect(server.calls).toBe(1);
    expect(server.batches).toHaveLength(1);
  });

  it('refuse a short answer as unavailable and cache none of it', async () => {
    server.shortAnswers = true;
    try {
      const cache = new RecipientCache(client, 60_000, 1_000_000);
      const outcomes = await Promise.allSettled([token(40), token(41)].map((t) => cache.resolve(t)));
      expect(outcomes.map((o) => o.status === 'rejected' && o.reason.code)).toEqual([
        'unavailable',
        'unavailable',
      ]);
      expect(cache.peek(token(40))).toBeUndefined();
      expect(cache.peek(token(41))).toBeUndefined();
    } finally {
      server.shortAnswers = false;
    }
  });

  it('ask one token a call when the recipient service predates ResolveLinks', async () => {
    const older = new TestResolveLinkServer(false);
    for (let i = 0; i < 3; i++) older.recipients.set(token(i), recipient(i));
    const address = await older.start();
    const olderClient = new (loadRecipientsProto().outreach.v1.RecipientService)(
      address,
      credentials.createInsecure(),
    );
    try {
      const cache = new RecipientCache(olderClient, 60_000, 1_000_000);
      const found = await Promise.all(
        [token(0), token(1), 'madeup2xxxxxxxxx', token(2)].map((t) => cache.resolve(t)),
      );
      expect(found.map((r) => r?.id ?? null)).toEqual(['rcp_0', 'rcp_1', null, 'rcp_2']);
      expect(older.calls).toBe(4);
      expect(older.batches).toEqual([]);
    } finally {
      olderClient.close();
      await older.stop();
    }
  });
});
