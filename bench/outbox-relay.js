#!/usr/bin/env node
// How long an outbox relay takes to publish a backlog (`node bench/outbox-relay.js`, after `npm run
// build`; not part of `npm run bench`): 10,000 RecipientChanged events, as a bulk delete of that
// many recipients writes, then one more, as the next change of another campaign's recipient. The
// time until that last event is published is how long the bulk delete holds up every other
// recipient change. Real PostgreSQL and NATS (DATABASE_URL's server, NATS_URL); a database and
// streams of its own, dropped at the end. Median of 3 runs.

const { connect } = require('nats');
const { Client, Pool } = require('pg');
const pino = require('pino');
const { ensureStreams, enqueueAll, OutboxRelay, withTransaction } = require('../packages/platform/dist');
const { RECIPIENT_OUTBOX } = require('../recipient-service/dist/recipients/recipients.service');

const ROWS = 10_000;
const RUNS = 3;
const admin = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const name = `bench_outbox_${process.pid}`;
const prefix = `benchoutbox${process.pid}`;

async function main() {
  const root = new Client({ connectionString: admin });
  await root.connect();
  await root.query(`CREATE DATABASE ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  const pool = new Pool({ connectionString: url.toString(), max: 4 });
  const nc = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222' });
  const jsm = await nc.jetstreamManager();
  try {
    await pool.query('CREATE SCHEMA recipients');
    await pool.query(`CREATE TABLE recipients.outbox (
      id bigserial PRIMARY KEY, subject text NOT NULL, payload jsonb NOT NULL, trace_context jsonb,
      created_at timestamptz NOT NULL DEFAULT now(), sent_at timestamptz, refused text)`);
    await ensureStreams(jsm, prefix);
    const subject = `${prefix}.events.recipient.changed`;
    const event = (i, campaignId) => ({
      subject,
      payload: {
        recipientId: `rcp_${i}`,
        campaignId,
        projectId: 'prj_b',
        token: `t${i}`,
        change: 'deleted',
        at: new Date().toISOString(),
      },
    });
    const times = [];
    for (let run = 0; run < RUNS; run++) {
      await withTransaction(pool, (client) =>
        enqueueAll(
          RECIPIENT_OUTBOX,
          client,
          Array.from({ length: ROWS }, (_, i) => event(i, 'cmp_bulk')),
        ),
      );
      await withTransaction(pool, (client) =>
        enqueueAll(RECIPIENT_OUTBOX, client, [event('other', 'cmp_other')]),
      );
      const relay = new OutboxRelay(
        RECIPIENT_OUTBOX,
        pool,
        nc.jetstream(),
        pino({ level: 'silent' }),
        3_600_000,
      );
      const started = performance.now();
      relay.start();
      await relay.idle();
      times.push(performance.now() - started);
      await relay.stop();
      const { rows } = await pool.query(
        'SELECT count(*)::int AS n FROM recipients.outbox WHERE sent_at IS NULL',
      );
      if (rows[0].n !== 0) throw new Error(`${rows[0].n} rows left unsent`);
      await pool.query('TRUNCATE recipients.outbox');
    }
    times.sort((a, b) => a - b);
    const median = times[Math.floor(times.length / 2)];
    console.log(
      `${ROWS + 1} events published in ${median.toFixed(0)} ms (median of ${RUNS}; runs ${times.map((t) => t.toFixed(0)).join(', ')}): ${Math.round(((ROWS + 1) / median) * 1000)} events/s`,
    );
  } finally {
    for (const s of [`${prefix.toUpperCase()}_STATE`, `${prefix.toUpperCase()}_EVENTS`])
      await jsm.streams.delete(s).catch(() => undefined);
    await nc.close();
    await pool.end();
    await root.query(`DROP DATABASE ${name}`);
    await root.end();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
