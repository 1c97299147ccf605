#!/usr/bin/env node
// Checks that the alert rules on Kubernetes objects select what the chart renders:
//   node deploy/checks/validate-alert-scope.js <rendered.yaml> <namespace>
// the four services' Deployments, HPAs and pods and the migration Job, by the names the render
// gives them, in the namespace it was rendered for. Exits 1 naming each problem.

const fs = require('node:fs');
const path = require('node:path');
const YAML = require('yaml');

const [rendered, namespace] = process.argv.slice(2);
const docs = YAML.parseAllDocuments(fs.readFileSync(rendered, 'utf8'))
  .map((d) => d.toJS())
  .filter(Boolean);
const alerts = YAML.parse(fs.readFileSync(path.resolve(__dirname, '../prometheus/alerts.yaml'), 'utf8'));
const rules = alerts.groups.flatMap((g) => g.rules);
const problems = [];

const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** The rule's matcher on `label`, as a regular expression over whole values. */
function matcher(alert, label) {
  const rule = rules.find((r) => r.alert === alert);
  const m = rule && new RegExp(`\\b${label}\\s*(=~?)\\s*"([^"]*)"`).exec(rule.expr);
  if (!m) {
    problems.push(`${alert}: no ${label} matcher`);
    return null;
  }
  return new RegExp(m[1] === '=' ? `^${escapeRegExp(m[2])}$` : `^(?:${m[2]})$`);
}

const services = ['gateway', 'link-runtime', 'campaign-service', 'recipient-service'];
const named = (kind, suffixes) =>
  docs
    .filter((d) => d.kind === kind && suffixes.some((s) => d.metadata.name.endsWith(`-${s}`)))
    .map((d) => d.metadata.name);
// A pod of a Deployment is named <deployment>-<replica set hash>-<suffix>.
const pods = named('Deployment', services).map((n) => `${n}-5d8f7c9b4-x2k9q`);
const wanted = [
  ['OutreachNoReadyReplicas', 'deployment', named('Deployment', services)],
  ['OutreachHpaAtMaximum', 'horizontalpodautoscaler', named('HorizontalPodAutoscaler', services)],
  ['OutreachTargetDown', 'pod', pods],
  ['OutreachPodRestarting', 'pod', pods],
  ['OutreachMigrationFailed', 'job_name', named('Job', ['migrate'])],
];
for (const [alert, label, objects] of wanted) {
  const re = matcher(alert, label);
  if (objects.length === 0) problems.push(`${alert}: the render has no ${label} to select`);
  if (re) for (const o of objects) if (!re.test(o)) problems.push(`${alert}: ${label} ${re} misses ${o}`);
  // A pod of another install, or another team's api-gateway, is not selected.
  if (re && (re.test('api-gateway-5d8f7c9b4-x2k9q') || re.test('api-gateway')))
    problems.push(`${alert}: ${label} ${re} also selects another team's api-gateway`);
}
for (const r of rules) {
  for (const m of String(r.expr).matchAll(/\bnamespace\s*=\s*"([^"]*)"/g))
    if (m[1] !== namespace) problems.push(`${r.alert}: namespace "${m[1]}", the render's is "${namespace}"`);
}

if (problems.length > 0) {
  for (const p of problems) console.error(p);
  process.exit(1);
}
console.log(`alerts select the render's ${wanted.length} kinds of objects in namespace ${namespace}`);
