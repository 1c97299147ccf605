#!/usr/bin/env node
// Checks the Grafana dashboard and the Prometheus alert rules: well-formed, every panel and
// rule complete, and the metrics the services export (or promise to) actually charted.
// Exits 1 naming each problem. An alert rules file other than deploy/prometheus/alerts.yaml may
// be given as the first argument (check-deploy.sh proves the checks refuse a bad one).

const fs = require('node:fs');
const path = require('node:path');
const YAML = require('yaml');

const root = path.resolve(__dirname, '../..');
const problems = [];
const dashboard = JSON.parse(
  fs.readFileSync(path.join(root, 'deploy/grafana/outreach-dashboard.json'), 'utf8'),
);
const alerts = YAML.parse(
  fs.readFileSync(process.argv[2] ?? path.join(root, 'deploy/prometheus/alerts.yaml'), 'utf8'),
);

/** Unbalanced (), {}, [] or quotes: the commonest PromQL typo. */
function balanced(expr) {
  const stack = [];
  const pairs = { ')': '(', '}': '{', ']': '[' };
  let quote = null;
  for (const ch of expr) {
    if (quote) {
      if (ch === quote) quote = null;
      continue;
    }
    if (ch === '"' || ch === "'") quote = ch;
    else if ('({['.includes(ch)) stack.push(ch);
    else if (ch in pairs && stack.pop() !== pairs[ch]) return false;
  }
  return stack.length === 0 && !quote;
}

// ---- dashboard ------------------------------------------------------------------------------
const exprs = [];
const ids = new Set();
for (const p of dashboard.panels ?? []) {
  if (ids.has(p.id)) problems.push(`dashboard: duplicate panel id ${p.id}`);
  ids.add(p.id);
  if (!p.gridPos) problems.push(`dashboard: panel "${p.title}" has no gridPos`);
  if (p.type === 'row') continue;
  if (!p.title) problems.push(`dashboard: panel ${p.id} has no title`);
  if (!p.targets?.length) problems.push(`dashboard: panel "${p.title}" has no query`);
  for (const t of p.targets ?? []) {
    if (!t.expr || !balanced(t.expr))
      problems.push(`dashboard: panel "${p.title}" has a malformed query: ${t.expr}`);
    exprs.push(t.expr ?? '');
  }
}
if (!dashboard.uid || !dashboard.title) problems.push('dashboard: uid and title are required');
const wanted = [
  'http_requests_total',
  'http_request_duration_seconds_bucket',
  'grpc_server_handled_total',
  'grpc_server_handling_seconds_bucket',
  'link_conversations_admitted_total',
  'link_refusals_total',
  'campaign_budget_remaining',
  'gateway_rate_limited_total',
  'nats_consumer_pending',
  'link_usage_unconfirmed_batches',
  'link_usage_unconfirmed_oldest_seconds',
  'link_usage_replay_batches',
  'link_counter_seeds_total',
  'db_pool_waiting',
  'db_pool_total',
  'dependency_up',
  'grpc_server_connections_by_transport_total',
  'grpc_server_tls_certificate_expiry_timestamp_seconds',
  'grpc_client_tls_certificate_expiry_timestamp_seconds',
];
for (const m of wanted)
  if (!exprs.some((e) => new RegExp(`\\b${m}\\b`).test(e))) problems.push(`dashboard: no panel charts ${m}`);

// The shared metric names must still be the ones packages/platform defines.
const platform = fs.readFileSync(path.join(root, 'packages/platform/src/metrics.ts'), 'utf8');
for (const m of [
  'http_requests_total',
  'http_request_duration_seconds',
  'grpc_server_handled_total',
  'grpc_server_handling_seconds',
])
  if (!platform.includes(`'${m}'`)) problems.push(`packages/platform/src/metrics.ts no longer defines ${m}`);

// ---- alerts ---------------------------------------------------------------------------------
const names = new Set();
const alertExprs = [];
for (const g of alerts?.groups ?? []) {
  if (!g.name || !Array.isArray(g.rules) || g.rules.length === 0)
    problems.push('alerts: a group needs a name and rules');
  for (const r of g.rules ?? []) {
    const n = r.alert ?? '(unnamed)';
    if (!r.alert) problems.push('alerts: a rule has no alert name');
    if (names.has(n)) problems.push(`alerts: duplicate alert ${n}`);
    names.add(n);
    if (typeof r.expr !== 'string' || !balanced(r.expr)) problems.push(`alerts: ${n} has a malformed expr`);
    if (!['critical', 'warning', 'info'].includes(r.labels?.severity))
      problems.push(`alerts: ${n} needs severity`);
    if (!r.annotations?.summary) problems.push(`alerts: ${n} needs a summary`);
    if (r.for !== undefined && !/^\d+[smh]$/.test(r.for))
      problems.push(`alerts: ${n} has a bad for: ${r.for}`);
    alertExprs.push(r.expr ?? '');
  }
}
if (names.size === 0) problems.push('alerts: no rules');
// The probes are counted in the HTTP metrics (route="/livez", "/readyz"): an HTTP alert that took
// them in would fire on a slow /readyz during a store outage, or have its 5xx ratio diluted; a
// latency or error panel would chart a failing /readyz above the routes customers use.
const PROBES = ['/livez', '/readyz'];
/** The probes an expression's HTTP metrics still count (none once `route!~` excludes them). */
function probesCounted(expr) {
  const counted = new Set();
  for (const m of String(expr).matchAll(
    /\b(http_requests_total|http_request_duration_seconds(?:_bucket|_sum|_count)?)\b(\{[^}]*\})?/g,
  )) {
    const excluded = [...(m[2] ?? '').matchAll(/\broute\s*!~\s*"([^"]*)"/g)].map(
      (x) => new RegExp(`^(?:${x[1]})$`),
    );
    for (const p of PROBES) if (!excluded.some((re) => re.test(p))) counted.add(p);
  }
  return [...counted];
}
for (const g of alerts?.groups ?? []) {
  for (const r of g.rules ?? []) {
    const left = probesCounted(r.expr ?? '');
    if (left.length > 0) problems.push(`alerts: ${r.alert} counts the probes (${left.join(', ')})`);
  }
}
// Rules on Kubernetes objects must select this install only, or another team's api-gateway would
// page this team: every kube-state-metrics series by one namespace, and the objects by names that
// begin with one prefix (the chart's full name), the same in every rule so that one edit moves
// them all to another install. `up` carries no object labels but the target's namespace and the
// pod's name: the namespace and the prefix.
const OBJECT_LABELS = ['deployment', 'horizontalpodautoscaler', 'pod', 'job_name'];
const namespaces = new Set();
const prefixes = new Set();
for (const g of alerts?.groups ?? []) {
  for (const r of g.rules ?? []) {
    for (const m of String(r.expr ?? '').matchAll(/\b(kube_\w+|up)\b\s*(\{[^}]*\})?/g)) {
      const matchers = [...(m[2] ?? '').matchAll(/(\w+)\s*(=~|!~|!=|=)\s*"([^"]*)"/g)].map((x) => ({
        label: x[1],
        op: x[2],
        value: x[3],
      }));
      const ns = matchers.find((x) => x.label === 'namespace' && x.op === '=');
      if (ns) namespaces.add(ns.value);
      else problems.push(`alerts: ${r.alert} selects ${m[1]} without namespace="<the install's namespace>"`);
      for (const x of matchers.filter((y) => OBJECT_LABELS.includes(y.label) && y.op.startsWith('='))) {
        const prefix = /^([a-z0-9][a-z0-9-]*?-)/.exec(x.value)?.[1];
        if (prefix) prefixes.add(prefix);
        else problems.push(`alerts: ${r.alert} matches ${x.label} "${x.value}" by no fixed name prefix`);
      }
      if (m[1] === 'up' && !matchers.some((y) => y.label === 'pod'))
        problems.push(`alerts: ${r.alert} selects up without the pods' names`);
      // kube_job_status_failed counts failed pods: above 0 after one, even when a retry succeeds.
      if (m[1] === 'kube_job_status_failed')
        problems.push(
          `alerts: ${r.alert} reads kube_job_status_failed (failed pods); use kube_job_failed{condition="true"}`,
        );
      if (m[1] === 'kube_job_failed' && !matchers.some((y) => y.label === 'condition' && y.value === 'true'))
        problems.push(`alerts: ${r.alert} reads kube_job_failed without condition="true"`);
    }
  }
}
if (namespaces.size > 1)
  problems.push(`alerts: rules select several namespaces: ${[...namespaces].join(', ')}`);
if (prefixes.size > 1)
  problems.push(`alerts: rules select several name prefixes: ${[...prefixes].join(', ')}`);
if (
  !(alerts?.groups ?? []).some((g) => (g.rules ?? []).some((r) => /\bkube_job_failed\b/.test(r.expr ?? '')))
)
  problems.push('alerts: nothing alerts on a failed migration Job (kube_job_failed)');

// The request-rate panel may show the probes' traffic; latency and status panels may not.
for (const p of dashboard.panels ?? []) {
  for (const t of p.targets ?? []) {
    const expr = t.expr ?? '';
    if (!/http_request_duration_seconds|status\s*=~/.test(expr)) continue;
    const left = probesCounted(expr);
    if (left.length > 0)
      problems.push(`dashboard: panel "${p.title}" counts the probes (${left.join(', ')})`);
  }
}
for (const m of [
  'http_requests_total',
  'grpc_server_handled_total',
  'nats_consumer_pending',
  'link_usage_unconfirmed_oldest_seconds',
  'db_pool_waiting',
  'dependency_up',
  'up',
])
  if (!alertExprs.some((e) => new RegExp(`\\b${m}\\b`).test(e)))
    problems.push(`alerts: nothing alerts on ${m}`);

if (problems.length > 0) {
  for (const p of problems) console.error(p);
  process.exit(1);
}
console.log(`dashboard: ${dashboard.panels.length} panels; alerts: ${names.size} rules`);
