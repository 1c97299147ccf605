import { randomUUID } from 'node:crypto';
import { conversationIdsOf, findConversation } from '../src/admission/conversations.repository';
import { ConversationStore, mayHaveHadConversations } from '../src/conversations/conversations.store';
import { type AdmissionFixture, startAdmission } from './support/admission';
import { activeCampaign } from './support/fixtures';

let f: AdmissionFixture;
beforeAll(async () => {
  f = await startAdmission();
});
afterAll(() => f?.close());

it("erases a bulk delete's recipients a few queries at a time, one at a time, and each one's history", async () => {
  // 1,200 deleted recipients, one with a conversation in the record and in Redis.
  const recipients = Array.from({ length: 1200 }, () => `rcp_${randomUUID()}`);
  const conversation = `cnv_${randomUUID()}`;
  await f.pool.query(
    `INSERT INTO link.conversations (id, recipient_id, campaign_id, project_id, started_at)
     VALUES ($1, $2, 'cmp_erase', 'prj_erase', now())`,
    [conversation, recipients[700]],
  );
  const key = `${f.ns.redisPrefix}link:conv:${conversation}`;
  await f.redis.hset(key, { id: conversation, recipientId: recipients[700] });
  await f.redis.rpush(`${key}:history`, JSON.stringify({ role: 'user', content: 'my account number' }));

  let queries = 0;
  let inFlight = 0;
  let mostInFlight = 0;
  const store = new ConversationStore(f.redis, f.ns.redisPrefix, 3600, {
    find: (id) => findConversation(f.pool, id),
    idsOf: async (ids) => {
      queries++;
      mostInFlight = Math.max(mostInFlight, ++inFlight);
      try {
        return await conversationIdsOf(f.pool, ids);
      } finally {
        inFlight--;
      }
    },
    clock: () => new Date(),
  });
  await Promise.all(recipients.map((r) => store.eraseRecipient(r)));
  // As their events arrive, each alone: the first goes at once, the rest 500 a query behind it.
  expect(queries).toBeLessThanOrEqual(4);
  expect(mostInFlight).toBe(1);
  expect(await f.redis.exists(`${key}:history`)).toBe(0);
  expect(await f.redis.hget(key, 'id')).toBeNull();
  // A message already past the link's checks (the recipient deleted while its body was read) finds
  // the conversation gone: it is not rebuilt from the durable record, which still holds it.
  expect(await store.get(conversation)).toBeNull();
  await store.append(conversation, [{ role: 'user', content: 'my account number' }], 40);
  expect(await f.redis.exists(`${key}:history`)).toBe(0);
});

it('looks for conversations only in campaigns that may have had some: launched, and started', () => {
  const now = new Date();
  const running = activeCampaign();
  expect(mayHaveHadConversations(running, now)).toBe(true);
  expect(mayHaveHadConversations({ ...running, launchedAt: null }, now)).toBe(false);
  const later = new Date(now.getTime() + 86_400_000).toISOString();
  expect(mayHaveHadConversations({ ...running, startDate: later }, now)).toBe(false);
});
