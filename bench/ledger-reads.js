// What a campaign's usage chart and monthly statement cost to read on a long ledger: the
// quarter-hour counts they read since migration 012, against the ledger rows they read before,
// in one process on one database. Not part of `npm run bench` (no target; it loads a million rows).
//
//   node bench/ledger-reads.js [--conversations 1000000]
//
// Needs `npm run build` first. Creates and drops its own database on the local PostgreSQL.
const path = require('node:path');
const fs = require('node:fs');
const { Pool } = require('pg');
const { migrate } = require('../packages/platform/dist');
const { arg, median } = require('./lib');
const { conversationsOverTime } = require('../campaign-service/dist/dashboard/usage-chart');
const { billableUsage } = require('../campaign-service/dist/billing/statements.service');

const CONVERSATIONS = arg('conversations', 1_000_000);
const SERVER = 'postgres://postgres@127.0.0.1:5432';
const MONTH = '2026-02';

// The reads as they were before migration 012, kept here as the baseline.
const LEDGER_CHART = `SELECT to_char(date_trunc('day', started_at AT TIME ZONE 'Europe/Berlin'), 'YYYY-MM-DD"T"HH24:MI') AS bucket,
         count(*) FROM conversations WHERE campaign_id = $1 GROUP BY 1 ORDER BY 1`;
const LEDGER_STATEMENT = `SELECT conversation_id, started_at FROM conversations
   WHERE campaign_id = $1 AND started_at < (to_date($2, 'YYYY-MM') + interval '1 month')::timestamp AT TIME ZONE 'UTC'`;

/** Milliseconds per call of `fn`, the median of five after one to warm up. */
async function timed(fn) {
  await fn();
  const runs = [];
  for (let i = 0; i < 5; i++) {
    const started = process.hrtime.bigint();
    await fn();
    runs.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return median(runs);
}

async function main() {
  const name = `bench_ledger_${process.pid}`;
  const admin = new Pool({ connectionString: `${SERVER}/postgres`, max: 1 });
  await admin.query(`CREATE DATABASE ${name}`);
  const pool = new Pool({
    connectionString: `${SERVER}/${name}?options=-c%20search_path%3Dcampaigns`,
    max: 2,
  });
  try {
    await migrate(pool, 'campaigns', path.join(__dirname, '../campaign-service/migrations'));
    // One campaign, a conversation every 3 seconds from New Year on (a million: 35 days).
    for (let from = 0; from < CONVERSATIONS; from += 100_000) {
      await pool.query(
        `INSERT INTO conversations (conversation_id, campaign_id, project_id, recipient_id, started_at)
         SELECT 'cnv_' || g, 'cmp_big', 'prj_big', 'rcp_' || (g % 1000), timestamptz '2026-01-01' + g * interval '3 seconds'
           FROM generate_series($1::int, $2::int) g`,
        [from, Math.min(from + 100_000, CONVERSATIONS) - 1],
      );
      console.error(`loaded ${Math.min(from + 100_000, CONVERSATIONS)} of ${CONVERSATIONS} conversations`);
    }
    await pool.query('VACUUM ANALYZE conversations');
    await pool.query('VACUUM ANALYZE campaign_usage_quarters');
    const result = {
      conversations: CONVERSATIONS,
      chartMs: {
        ledger: await timed(() => pool.query(LEDGER_CHART, ['cmp_big'])),
        quarters: await timed(() => conversationsOverTime(pool, 'cmp_big', 'day', 'Europe/Berlin')),
      },
      statementFactsMs: {
        ledger: await timed(() => pool.query(LEDGER_STATEMENT, ['cmp_big', MONTH])),
        quarters: await timed(() => billableUsage(pool, 'cmp_big', MONTH)),
      },
    };
    result.ratios = {
      chartLedgerOverQuarters: Number((result.chartMs.ledger / result.chartMs.quarters).toFixed(1)),
      statementLedgerOverQuarters: Number(
        (result.statementFactsMs.ledger / result.statementFactsMs.quarters).toFixed(1),
      ),
    };
    const file = path.join(
      __dirname,
      'results',
      `ledger-reads-${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
    );
    fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await pool.end();
    await admin.query(`DROP DATABASE ${name}`);
    await admin.end();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
