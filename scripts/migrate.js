#!/usr/bin/env node
// Applies every service's migrations (each to its own schema), creating the database first
// when it does not exist. Used by `npm start`, and by the Helm pre-upgrade Job.
const { Client } = require('pg');

const SERVICES = ['campaign-service', 'recipient-service', 'link-runtime'];

async function ensureDatabase(url) {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  try {
    await client.connect();
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount === 0) {
      await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
      console.log(`created database ${name}`);
    }
  } catch (err) {
    // Managed databases often forbid CREATE DATABASE; then the database must already exist.
    console.warn(`could not ensure database ${name} exists: ${err.message}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function main() {
  const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/outreach';
  await ensureDatabase(url);
  for (const service of SERVICES) {
    const { runMigrations } = require(`../${service}/dist/server.js`);
    const applied = await runMigrations({ ...process.env, DATABASE_URL: url });
    console.log(`${service}: ${applied.length ? `applied ${applied.join(', ')}` : 'up to date'}`);
  }
}

main().catch((err) => {
  console.error(`migration failed: ${err.message}`);
  process.exit(1);
});
