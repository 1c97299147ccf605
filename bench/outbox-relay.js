#!/usr/bin/env node
// How long an outbox relay takes to publish a backlog (`node bench/outbox-relay.js`, after `npm run
// build`; not part of `npm run bench`), each outbox as configured against the same outbox publishing
// one row at a time (no `orderKey`), alternating in one process:
// - recipients: 10,000 RecipientChanged events, as a bulk delete of that many recipients writes,
//   then one more, as the next change of another campaign's recipient. The time until that last
//   event is published is how long the bulk delete holds up every other recipient change.
// - campaign snapshots: 10,000 campaign state snapshots, as the campaign service writes when the
//   state stream was lost and is given every campaign again (its state republisher).
// Real PostgreSQL and NATS (DATABASE_URL's server, NATS_URL); a database and streams of its own,
// dropped at the end. Median of 3 runs each.

const { connect } = require('nats');
const { Client, Pool } = require('pg');
const pino = require('pino');
const { ensureStreams, enqueueAll, OutboxRelay, withTransaction } = require('../packages/platform/dist');
const { RECIPIENT_OUTBOX } = require('../recipient-service/dist/recipients/recipients.service');
const { CAMPAIGN_OUTBOX } = require('../campaign-service/dist/events/outbox');

const ROWS = 10_000;
const RUNS = 3;
const admin = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const name = `bench_outbox_${process.pid}`;
const prefix = `benchoutbox${process.pid}`;

/** A RecipientChanged event of a bulk delete, as the recipient service writes it. */
function recipientEvent(i, campaignId) {
  return {
    subject: `${prefix}.events.recipient.changed`,
    payload: {
      recipientId: `rcp_${i}`,
      campaignId,
      projectId: 'prj_b',
      change: 'deleted',
      at: new Date().toISOString(),
    },
  };
}

/** A campaign's state snapshot, on its own subject, as the state republisher writes it. */
function campaignSnapshot(i) {
  const id = `cmp_${i}`;
  return {
    subject: `${prefix}.state.campaign.${id}`,
    payload: { id, projectId: 'prj_b', name: `Campaign ${i}`, deviceId: 'dev_b', version: 1 },
  };
}

const CASES = [
  {
    name: 'recipients (a bulk delete, then one more change)',
    outbox: RECIPIENT_OUTBOX,
    batches: () => [
      Array.from({ length: ROWS }, (_, i) => recipientEvent(i, 'cmp_bulk')),
      [recipientEvent('other', 'cmp_other')],
    ],
  },
  {
    name: 'campaign snapshots (a lost state stream given again)',
    outbox: CAMPAIGN_OUTBOX,
    batches: () => [Array.from({ length: ROWS }, (_, i) => campaignSnapshot(i))],
  },
];

/** Milliseconds until `outbox`'s relay has published `batches`, each written in one transaction. */
async function timeRelay(pool, nc, outbox, batches) {
  for (const batch of batches) await withTransaction(pool, (client) => enqueueAll(outbox, client, batch));
  const relay = new OutboxRelay(outbox, pool, nc.jetstream(), pino({ level: 'silent' }), 3_600_000);
  const started = performance.now();
  relay.start();
  await relay.idle();
  const ms = performance.now() - started;
  await relay.stop();
  const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${outbox.table} WHERE sent_at IS NULL`);
  if (rows[0].n !== 0) throw new Error(`${rows[0].n} rows left unsent`);
  await pool.query(`TRUNCATE ${outbox.table}`);
  return ms;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

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
    for (const table of new Set(CASES.map((c) => c.outbox.table))) {
      if (table.includes('.')) await pool.query(`CREATE SCHEMA IF NOT EXISTS ${table.split('.')[0]}`);
      await pool.query(`CREATE TABLE ${table} (
        id bigserial PRIMARY KEY, subject text NOT NULL, payload jsonb NOT NULL, trace_context jsonb,
        created_at timestamptz NOT NULL DEFAULT now(), sent_at timestamptz, refused text)`);
    }
    await ensureStreams(jsm, prefix);
    for (const c of CASES) {
      const events = c.batches().reduce((n, b) => n + b.length, 0);
      const oneByOne = { ...c.outbox, orderKey: undefined };
      const times = { configured: [], oneByOne: [] };
      for (let run = 0; run < RUNS; run++) {
        times.oneByOne.push(await timeRelay(pool, nc, oneByOne, c.batches()));
        times.configured.push(await timeRelay(pool, nc, c.outbox, c.batches()));
      }
      const line = (label, xs) =>
        `  ${label}: ${median(xs).toFixed(0)} ms (runs ${xs.map((t) => t.toFixed(0)).join(', ')}), ${Math.round((events / median(xs)) * 1000)} events/s`;
      console.log(`${c.name}: ${events} events, median of ${RUNS}`);
      console.log(line('one row at a time', times.oneByOne));
      console.log(line('as configured (by orderKey)', times.configured));
      console.log(`  ratio: ${(median(times.oneByOne) / median(times.configured)).toFixed(2)}× as fast`);
    }
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
