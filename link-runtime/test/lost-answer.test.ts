import type { Pool } from 'pg';
import type { OpenLink } from '../src/admission/open-link';
import { type AdmissionFixture, startAdmission } from './support/admission';
import { activeCampaign, device, recipient } from './support/fixtures';

// What the next write of conversations does after it has reached PostgreSQL: 'commit-then-cut'
// answers as a connection cut just after COMMIT does, 'commit-then-shutdown' as a primary shut
// down in a failover after committing (57P01), 'refuse' as PostgreSQL refusing it.
let next: 'commit-then-cut' | 'commit-then-shutdown' | 'commit-then-read-timeout' | 'refuse' | undefined;

/** The pool, with the next write of conversations failing as `next` says. */
function failingWrites(pool: Pool): Pool {
  return new Proxy(pool, {
    get(target, prop, receiver) {
      if (prop !== 'query') return Reflect.get(target, prop, receiver);
      return async (config: { name?: string }, ...rest: unknown[]) => {
        const failure = config?.name === 'link-insert-conversations' ? next : undefined;
        if (failure === 'refuse') {
          next = undefined;
          throw Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
        }
        const result = await (target.query as (...a: unknown[]) => Promise<unknown>)(config, ...rest);
        if (failure === 'commit-then-cut') {
          next = undefined;
          throw new Error('Connection terminated unexpectedly');
        }
        if (failure === 'commit-then-read-timeout') {
          next = undefined;
          throw new Error('Query read timeout');
        }
        if (failure === 'commit-then-shutdown') {
          next = undefined;
          throw Object.assign(new Error('terminating connection due to administrator command'), {
            code: '57P01',
          });
        }
        return result;
      };
    },
  });
}

let f: AdmissionFixture;
beforeAll(async () => {
  f = await startAdmission({}, failingWrites);
});
afterAll(() => f?.close());

const conversationsOf = async (recipientId: string) =>
  Number(
    (await f.pool.query('SELECT count(*) FROM link.conversations WHERE recipient_id = $1', [recipientId]))
      .rows[0].count,
  );

it('answers a start whose write committed although its answer was lost, and keeps it counted', async () => {
  const dev = device();
  const campaign = activeCampaign({ deviceId: dev.id });
  const link: OpenLink = {
    ...recipient(campaign, { maxTotalInteractions: 3 }),
    campaign,
    device: dev,
  };
  for (const [i, failure] of (
    ['commit-then-cut', 'commit-then-shutdown', 'commit-then-read-timeout'] as const
  ).entries()) {
    next = failure;
    expect((await f.admission.admit(link)).conversationId).toMatch(/^cnv_/);
    expect(await conversationsOf(link.recipient.id)).toBe(i + 1);
  }
  // All still counted: the cap of 3 is reached, and the next start is refused.
  await expect(f.admission.admit(link)).rejects.toMatchObject({ code: 'link_disabled' });
  expect(await conversationsOf(link.recipient.id)).toBe(3);
});

it('refuses a start PostgreSQL refused, and takes it back from the counters', async () => {
  const dev = device();
  const campaign = activeCampaign({ deviceId: dev.id });
  const link: OpenLink = {
    ...recipient(campaign, { maxTotalInteractions: 1 }),
    campaign,
    device: dev,
  };
  next = 'refuse';
  await expect(f.admission.admit(link)).rejects.toMatchObject({ code: 'unavailable' });
  expect(await conversationsOf(link.recipient.id)).toBe(0);
  expect((await f.admission.admit(link)).conversationId).toMatch(/^cnv_/);
});
