// Baseline: the least a start can be while it answers only after a durable write. A bare
// node:http server that, for each POST, inserts one row into PostgreSQL and answers 201 once
// the row is committed. Rows arriving together share one INSERT, one write in flight at a time,
// as the link runtime writes its admissions; no Redis, no NATS, no usage to apply.
const http = require('node:http');
const { randomUUID } = require('node:crypto');
const { Pool } = require('pg');

// Connections stay open between rounds, as a service's pool under steady load keeps them.
const pool = new Pool({
  connectionString: process.env.DATABASE_URL,
  max: 2,
  idleTimeoutMillis: 0,
  application_name: 'durable-insert',
});
const waiting = [];
let writing = false;
let scheduled = false;

function drain() {
  scheduled = false;
  if (writing || waiting.length === 0) return;
  const batch = waiting.splice(0, 500);
  writing = true;
  pool
    .query('INSERT INTO bench_durable (id, started_at) SELECT * FROM unnest($1::text[], $2::timestamptz[])', [
      batch.map((w) => w.id),
      batch.map((w) => w.at),
    ])
    .then(
      () => {
        for (const w of batch) w.done(null);
      },
      (err) => {
        for (const w of batch) w.done(err);
      },
    )
    .finally(() => {
      writing = false;
      drain();
    });
}

/** Resolves once the row is committed, together with the rows that arrived with it. */
function insert(id) {
  return new Promise((resolve, reject) => {
    waiting.push({ id, at: new Date(), done: (err) => (err ? reject(err) : resolve()) });
    if (!writing && !scheduled) {
      scheduled = true;
      setImmediate(drain);
    }
  });
}

async function main() {
  await pool.query(
    'CREATE TABLE IF NOT EXISTS bench_durable (id text PRIMARY KEY, started_at timestamptz NOT NULL)',
  );
  http
    .createServer((req, res) => {
      const id = randomUUID();
      req.resume();
      insert(id).then(
        () => {
          const body = JSON.stringify({ conversationId: id });
          res.writeHead(201, {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          });
          res.end(body);
        },
        () => {
          res.writeHead(503).end();
        },
      );
    })
    .listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
