import { composeSystemPrompt, selectKnowledge } from '@outreach/contracts';
import Redis from 'ioredis';
import { Client } from 'pg';
import { lockWaiters } from '../../test/support/lock-waits';
import { freePort } from '../../test/support/system';
import { FakeOpenAi } from './support/fake-openai';
import { type Harness, post, startHarness, waitFor } from './support/harness';

let h: Harness;
const model = new FakeOpenAi();
let metricsPort = 0;
let modelUrl = '';

beforeAll(async () => {
  modelUrl = await model.start();
  metricsPort = await freePort();
  h = await startHarness({
    METRICS_PORT: String(metricsPort),
    ASSISTANT_BASE_URL: modelUrl,
    ASSISTANT_API_KEY: 'sk-test-123',
    ASSISTANT_MODEL: 'test-model',
    ASSISTANT_TIMEOUT_MS: '500',
  });
});

afterAll(async () => {
  await h.close();
  await model.stop();
});

const SECRET = 'customer-secret-phrase-7731';

async function chat(token: string, conversationId: string, text: string, stream = false, base = h.base) {
  const res = await fetch(`${base}/i/${token}/conversations/${conversationId}/messages`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: stream ? 'text/event-stream' : 'application/json',
    },
    body: JSON.stringify({ text }),
  });
  return { status: res.status, text: await res.text(), type: res.headers.get('content-type') };
}

describe('the system prompt and history reaching the model', () => {
  it('append: device persona, safety, knowledge, device then recipient instructions; history as messages', async () => {
    const l = await h.link({
      recipient: { injectionMode: 'append', injectionInstructions: 'Offer Bob the loyalty discount.' },
    });
    const c = (await post(`${h.base}/i/${l.token}/conversations`)).body.conversationId;
    model.reply = 'We are open on weekdays.';
    const first = await chat(l.token, c, `What are your opening hours? ${SECRET}`);
    expect(JSON.parse(first.text)).toEqual({ reply: 'We are open on weekdays.' });

    model.reply = 'Returns take 30 days.';
    await chat(l.token, c, 'And returns?');
    const sent = model.requests.at(-1)!;
    expect(sent.authorization).toBe('Bearer sk-test-123');
    expect(sent.body.model).toBe('test-model');
    const customerText = `What are your opening hours? ${SECRET}\nAnd returns?`;
    const expectedSystem = composeSystemPrompt(
      l.device,
      { injectionMode: 'append', injectionInstructions: 'Offer Bob the loyalty discount.' },
      selectKnowledge(l.device.knowledge, customerText, 3),
    );
    expect(sent.body.messages).toEqual([
      { role: 'system', content: expectedSystem },
      { role: 'user', content: `What are your opening hours? ${SECRET}` },
      { role: 'assistant', content: 'We are open on weekdays.' },
      { role: 'user', content: 'And returns?' },
    ]);
    const system = sent.body.messages[0].content;
    expect(system.indexOf(l.device.customInstructions)).toBeLessThan(system.indexOf('Offer Bob'));
    expect(system).toContain(l.device.persona);
    expect(system).not.toContain(SECRET);
    expect(system).not.toContain('And returns?');
  });

  it('replace: the recipient instructions take the place of the device ones; streaming works', async () => {
    const l = await h.link({
      recipient: { injectionMode: 'replace', injectionInstructions: 'Only discuss the contract renewal.' },
    });
    const c = (await post(`${h.base}/i/${l.token}/conversations`)).body.conversationId;
    model.reply = 'Your renewal is due in May.';
    const res = await chat(l.token, c, `Tell me about my renewal ${SECRET}`, true);
    expect(res.type).toContain('text/event-stream');
    const events = [...res.text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]));
    expect(
      events
        .filter((e) => e.token)
        .map((e) => e.token)
        .join(''),
    ).toBe('Your renewal is due in May.');
    expect(events.at(-1)).toEqual({ reply: 'Your renewal is due in May.' });
    const sent = model.requests.at(-1)!;
    expect(sent.body.stream).toBe(true);
    const system = sent.body.messages[0].content;
    expect(system).toBe(
      composeSystemPrompt(
        l.device,
        { injectionMode: 'replace', injectionInstructions: 'Only discuss the contract renewal.' },
        selectKnowledge(l.device.knowledge, `Tell me about my renewal ${SECRET}`, 3),
      ),
    );
    expect(system).not.toContain(l.device.customInstructions);
    expect(system).toContain('Only discuss the contract renewal.');
    expect(system).not.toContain(SECRET);
    // The streamed reply is kept as history for the next turn.
    model.reply = 'ok';
    await chat(l.token, c, 'thanks');
    expect(model.requests.at(-1)!.body.messages.slice(1)).toEqual([
      { role: 'user', content: `Tell me about my renewal ${SECRET}` },
      { role: 'assistant', content: 'Your renewal is due in May.' },
      { role: 'user', content: 'thanks' },
    ]);
  });

  it('a stream the model cuts off or fails mid-way, or an empty reply, is an error, and none of it is kept', async () => {
    const l = await h.link();
    const c = (await post(`${h.base}/i/${l.token}/conversations`)).body.conversationId;
    model.reply = 'Our returns policy is thirty days from delivery.';
    try {
      // What the model sent may be the customer's words: the logged error does not quote it.
      // First: failures like it are logged once per 10 s, the next ones only counted.
      model.rawBody = 'SSN:078-05';
      const logged = h.logs.length;
      expect((await chat(l.token, c, 'question echoed?')).status).toBe(503);
      const lines = JSON.stringify(h.logs.slice(logged));
      expect(lines).toContain("Unexpected token 'S'");
      expect(lines).not.toContain('078-05');
      model.rawBody = null;
      for (const end of ['cut', 'error'] as const) {
        model.streamEnd = end;
        const res = await chat(l.token, c, `question ${end}?`, true);
        expect(res.text).toContain('"token":"Our "');
        expect(res.text).not.toContain('event: done');
        expect(res.text).toContain('event: error');
        expect(res.text).toContain('assistant_bad_response');
      }
      model.streamEnd = 'whole';
      model.reply = '';
      const empty = await chat(l.token, c, 'question empty?');
      expect(empty.status).toBe(503);
      expect(JSON.parse(empty.text)).toMatchObject({ details: { reason: 'assistant_bad_response' } });
      expect((await chat(l.token, c, 'question empty stream?', true)).text).toContain('event: error');
      model.rawBody = '<html>Bad gateway</html>';
      const garbage = await chat(l.token, c, 'question garbage?');
      expect(JSON.parse(garbage.text)).toMatchObject({ details: { reason: 'assistant_bad_response' } });
    } finally {
      model.streamEnd = 'whole';
      model.rawBody = null;
    }
    model.reply = 'Thirty days.';
    expect(JSON.parse((await chat(l.token, c, 'And returns?')).text)).toEqual({ reply: 'Thirty days.' });
    // The failed exchanges never reached the history the model is sent.
    expect(model.requests.at(-1)!.body.messages.slice(1)).toEqual([
      { role: 'user', content: 'And returns?' },
    ]);
  });

  it('a reply that ends after its recipient was deleted does not write the erased history back', async () => {
    const l = await h.link();
    const c = (await post(`${h.base}/i/${l.token}/conversations`)).body.conversationId;
    const record = `${h.ns.redisPrefix}link:conv:${c}`;
    const history = `${record}:history`;
    const redis = new Redis(h.ns.env.REDIS_URL);
    model.reply = 'Your account number is safe with us.';
    let release = () => {};
    try {
      expect((await chat(l.token, c, 'first question')).status).toBe(200);
      expect(await redis.llen(history)).toBe(2);
      // The model holds its reply until the deletion has erased the conversation, then answers
      // (within ASSISTANT_TIMEOUT_MS, 500): the reply ends after the recipient was deleted.
      release = model.hold();
      const asked = model.requests.length;
      const replying = chat(l.token, c, 'my account number is 12345');
      await waitFor(() => model.requests.length > asked);
      h.recipients.recipients.delete(l.token);
      await h.publisher.recipientChanged(l.recipient, 'deleted');
      // Erased: the history gone, the record left as a mark of the conversation.
      await waitFor(async () => (await redis.hget(record, 'erased')) === '1');
      expect(await redis.exists(history)).toBe(0);
      release();
      // The exchange is written, or not, before the reply is sent.
      expect((await replying).status).toBe(200);
      expect(await redis.exists(history)).toBe(0);
    } finally {
      release();
      redis.disconnect();
    }
  });

  it('a customer leaving before the model is asked (the history slow to read) asks it nothing', async () => {
    const l = await h.link();
    const c = (await post(`${h.base}/i/${l.token}/conversations`)).body.conversationId;
    // Redis lost the conversation, so the message reads it from PostgreSQL, held up by a lock.
    const redis = new Redis(h.ns.env.REDIS_URL);
    const blocker = new Client({ connectionString: h.ns.env.DATABASE_URL });
    await blocker.connect();
    const asked = model.requests.length;
    try {
      await redis.del(`${h.ns.redisPrefix}link:conv:${c}`);
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE link.conversations IN ACCESS EXCLUSIVE MODE');
      const leave = new AbortController();
      const sent = fetch(`${h.base}/i/${l.token}/conversations/${c}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ text: 'asked in a tunnel' }),
        signal: leave.signal,
      }).catch(() => undefined);
      // The customer leaves while the message waits for the lock, not before it arrived.
      await waitFor(async () => (await lockWaiters(blocker, '%FROM link.conversations%')) === 1);
      leave.abort();
      await sent;
      await new Promise((r) => setTimeout(r, 100));
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
      await redis.quit();
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(model.requests.length).toBe(asked);
    model.reply = 'Hello again.';
    await chat(l.token, c, 'asked in a tunnel');
    expect(model.requests.at(-1)!.body.messages.slice(1)).toEqual([
      { role: 'user', content: 'asked in a tunnel' },
    ]);
  });

  it('a model slower than ASSISTANT_TIMEOUT_MS gives a clear retryable error, never a hang', async () => {
    const l = await h.link();
    const c = (await post(`${h.base}/i/${l.token}/conversations`)).body.conversationId;
    model.delayMs = 2000;
    try {
      const started = Date.now();
      const res = await chat(l.token, c, 'hello?');
      expect(Date.now() - started).toBeLessThan(1500);
      expect(res.status).toBe(503);
      expect(JSON.parse(res.text)).toMatchObject({
        code: 'unavailable',
        retryable: true,
        details: { reason: 'assistant_timeout' },
      });
      const streamed = await chat(l.token, c, 'hello again?', true);
      expect(streamed.text).toContain('event: error');
      expect(streamed.text).toContain('assistant_timeout');
    } finally {
      model.delayMs = 0;
    }
  });
});

describe('a customer leaving mid-reply', () => {
  // Its own runtime, with a model timeout far beyond the test's wait: here only the customer's
  // leaving can end the model's stream, so an abandoned stream proves the leaving reached it.
  let patient: Harness;
  beforeAll(async () => {
    patient = await startHarness({
      ASSISTANT_BASE_URL: modelUrl,
      ASSISTANT_MODEL: 'test-model',
      ASSISTANT_TIMEOUT_MS: '60000',
    });
  });
  afterAll(() => patient?.close());

  it('stops the model and keeps nothing of that exchange', async () => {
    const l = await patient.link();
    const c = (await post(`${patient.base}/i/${l.token}/conversations`)).body.conversationId;
    model.reply = 'one two three four five six seven eight';
    const abandonedBefore = model.abandoned;
    const release = model.hold('midway');
    try {
      const leave = new AbortController();
      const res = await fetch(`${patient.base}/i/${l.token}/conversations/${c}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ text: 'asked on a train' }),
        signal: leave.signal,
      });
      const reader = res.body!.getReader();
      expect(new TextDecoder().decode((await reader.read()).value)).toContain('one');
      leave.abort();
      await waitFor(() => model.abandoned === abandonedBefore + 1, 10_000);
    } finally {
      release();
    }
    model.reply = 'Welcome back.';
    const again = await chat(l.token, c, 'asked on a train', false, patient.base);
    expect(JSON.parse(again.text)).toEqual({ reply: 'Welcome back.' });
    expect(model.requests.at(-1)!.body.messages.slice(1)).toEqual([
      { role: 'user', content: 'asked on a train' },
    ]);
  });
});

describe('metrics', () => {
  it('counts admissions, refusals by code and counter seeds on the metrics port', async () => {
    const l = await h.link({ recipient: { maxTotalInteractions: 1 } });
    await post(`${h.base}/i/${l.token}/conversations`);
    await post(`${h.base}/i/${l.token}/conversations`);
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(text).toMatch(/link_conversations_admitted_total\{[^}]*\} [1-9]/);
    expect(text).toMatch(/http_requests_total\{[^}]*route="\/i\/:token\/conversations"[^}]*status="403"/);
    expect(text).not.toContain(l.token);
    expect(text).toMatch(/link_refusals_total\{[^}]*code="link_disabled"[^}]*\} [1-9]/);
    // The new link's first start found no counters for its recipient, with nothing to restore.
    expect(text).toMatch(/link_counter_seeds_total\{[^}]*outcome="empty"[^}]*\} [1-9]/);
  });
});
