import type { Pool } from 'pg';
import { lockWaiters } from '../../test/support/lock-waits';
import type { OpenLink } from '../src/admission/open-link';
import { type AdmissionFixture, startAdmission } from './support/admission';
import { activeCampaign, device, recipient } from './support/fixtures';

// What the next write of conversations does after it has reached PostgreSQL: 'commit-then-cut'
// answers as a connection cut just after COMMIT does, 'commit-then-shutdown' as a primary shut
// down in a failover after committing (57P01), 'refuse' as PostgreSQL refusing it;
// 'read-timeout-while-running' gives up waiting as the client's read timeout does while the
// statement still runs on the server (it is held by a lock), which goes on with it.
let next:
  | 'commit-then-cut'
  | 'commit-then-shutdown'
  | 'commit-then-read-timeout'
  | 'read-timeout-while-running'
  | 'refuse'
  | undefined;
// The statement left running by 'read-timeout-while-running', settled (committed or failed).
let leftRunning: Promise<unknown> | undefined;

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
        const run = () => (target.query as (...a: unknown[]) => Promise<unknown>)(config, ...rest);
        if (failure === 'read-timeout-while-running') {
          next = undefined;
          leftRunning = run().catch(() => undefined);
          await waitingForLock();
          throw new Error('Query read timeout');
        }
        const result = await run();
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

/** Resolves once a write of conversations waits for a lock. */
async function waitingForLock(): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await lockWaiters(f.pool, '%INSERT INTO link.conversations%')) > 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the write never waited for the lock');
}

let f: AdmissionFixture;
beforeAll(async () => {
  f = await startAdmission({}, failingWrites);
});
afterAll(() => f?.close());

/** A live link whose recipient may have at most `max` conversations in all. */
function cappedLink(max: number): OpenLink {
  const dev = device();
  const campaign = activeCampaign({ deviceId: dev.id });
  return { ...recipient(campaign, { maxTotalInteractions: max }), campaign, device: dev };
}

const conversationsOf = async (recipientId: string) =>
  Number(
    (await f.pool.query('SELECT count(*) FROM link.conversations WHERE recipient_id = $1', [recipientId]))
      .rows[0].count,
  );

it('answers a start whose write committed although its answer was lost, and keeps it counted', async () => {
  const link = cappedLink(3);
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
  const link = cappedLink(1);
  next = 'refuse';
  await expect(f.admission.admit(link)).rejects.toMatchObject({ code: 'unavailable' });
  expect(await conversationsOf(link.recipient.id)).toBe(0);
  expect((await f.admission.admit(link)).conversationId).toMatch(/^cnv_/);
});

it('refuses a start whose write was still running when its answer was lost, and keeps it from committing later', async () => {
  const link = cappedLink(1);
  // SHARE mode holds the write of conversations, not the look-up of its batch.
  const blocker = await f.pool.connect();
  try {
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE link.conversations IN SHARE MODE');
    next = 'read-timeout-while-running';
    await expect(f.admission.admit(link)).rejects.toMatchObject({ code: 'unavailable' });
    await blocker.query('COMMIT');
  } finally {
    blocker.release();
  }
  // The write left running goes on once the lock is gone, and must not record the refused start.
  await leftRunning;
  expect(await conversationsOf(link.recipient.id)).toBe(0);
  expect((await f.admission.admit(link)).conversationId).toMatch(/^cnv_/);
  await expect(f.admission.admit(link)).rejects.toMatchObject({ code: 'link_disabled' });
});
