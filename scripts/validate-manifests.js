#!/usr/bin/env node
// Validates rendered Kubernetes manifests offline and checks the chart's own promises.
//
//   node scripts/validate-manifests.js <rendered.yaml> [--expect-trial] [--expect-service-monitor]
//     [--expect-network-policies]
//
// Every object is validated against the Kubernetes OpenAPI schema through the matching
// kubernetes-models class; then each workload is checked for probes, resources and a
// non-root security context, the Ingress for the three routes, and (--expect-network-policies)
// that the NetworkPolicies admit exactly what the services need. Prints one line per
// check, `ok <name>` or `not ok <name>` with the reasons indented below, and exits 1 if
// any failed.

const fs = require('node:fs');
const path = require('node:path');
const YAML = require('yaml');
const { createChecks } = require('./lib/checks');

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith('--'));
const label = (args.find((a) => a.startsWith('--label=')) ?? `--label=${path.basename(file ?? '')}`).slice(8);
const expectTrial = args.includes('--expect-trial');
const expectServiceMonitor = args.includes('--expect-service-monitor');
const expectNetworkPolicies = args.includes('--expect-network-policies');
// Hosts that must serve the dashboard (/) and nothing else, while no other host serves it.
const dashboardHosts = (args.find((a) => a.startsWith('--dashboard-hosts=')) ?? '--dashboard-hosts=')
  .slice('--dashboard-hosts='.length)
  .split(',')
  .filter(Boolean);
// `key=value`: the Ingress that routes /i routes nothing else and carries this annotation.
const linksAnnotation = (args.find((a) => a.startsWith('--links-annotation=')) ?? '')
  .slice('--links-annotation='.length)
  .match(/^([^=]+)=(.*)$/);
if (!file) {
  console.error('usage: validate-manifests.js <rendered.yaml> [--label=NAME] [--expect-trial]');
  process.exit(2);
}

const SERVICES = {
  gateway: { http: 8080, grpcOnly: false },
  'link-runtime': { http: 8081, grpcOnly: false },
  'campaign-service': { http: 8082, grpc: 50052, grpcOnly: false },
  'recipient-service': { grpc: 50051, grpcOnly: true },
};

/** The kubernetes-models class for apiVersion + kind, or undefined for a CRD it lacks. */
function modelFor(apiVersion, kind) {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const dir = group === '' ? version : `${group}/${version}`;
  try {
    const mod = require(`kubernetes-models/${dir}/${kind}`);
    return mod[kind];
  } catch {
    return undefined;
  }
}

const checks = createChecks();
function check(name, problems) {
  checks.check(`${label}: ${name}`, problems);
}

// ---- parse --------------------------------------------------------------------------
const objects = [];
const parseProblems = [];
for (const doc of YAML.parseAllDocuments(fs.readFileSync(file, 'utf8'))) {
  if (doc.errors.length > 0) {
    parseProblems.push(...doc.errors.map((e) => e.message));
    continue;
  }
  const obj = doc.toJS();
  if (obj && typeof obj === 'object') objects.push(obj);
}
check('rendered YAML parses', parseProblems);
const id = (o) => `${o.kind ?? '?'}/${o.metadata?.name ?? '?'}`;

// ---- schema ---------------------------------------------------------------------------
const schemaProblems = [];
const crdChecks = {
  'monitoring.coreos.com/v1/ServiceMonitor': (o) =>
    Array.isArray(o.spec?.endpoints) && o.spec.endpoints.length > 0 && o.spec?.selector?.matchLabels
      ? []
      : ['spec.selector.matchLabels and spec.endpoints are required'],
};
for (const o of objects) {
  if (!o.apiVersion || !o.kind || !o.metadata?.name) {
    schemaProblems.push(`${id(o)}: apiVersion, kind and metadata.name are required`);
    continue;
  }
  const crd = crdChecks[`${o.apiVersion}/${o.kind}`];
  if (crd) {
    for (const p of crd(o)) schemaProblems.push(`${id(o)}: ${p}`);
    continue;
  }
  const Model = modelFor(o.apiVersion, o.kind);
  if (!Model) {
    schemaProblems.push(`${id(o)}: no schema known for ${o.apiVersion} ${o.kind}`);
    continue;
  }
  try {
    new Model(o).validate();
  } catch (err) {
    schemaProblems.push(`${id(o)} (${o.apiVersion}): ${err.message}`);
  }
}
check(`every object matches its Kubernetes schema (${objects.length} objects)`, schemaProblems);

// ---- workloads --------------------------------------------------------------------------
const byKind = (kind) => objects.filter((o) => o.kind === kind);
/** An object's (or, given a pod template, its pods') component label. */
const componentOf = (o) => o.metadata?.labels?.['app.kubernetes.io/component'];
/** A service's container in its Deployment (named for it, else the first); undefined without one. */
function containerOf(svc) {
  const d = byKind('Deployment').find((o) => componentOf(o) === svc);
  if (!d) return undefined;
  return d.spec.template.spec.containers.find((x) => x.name === svc) ?? d.spec.template.spec.containers[0];
}

/** A Kubernetes quantity ("256Mi", "1Gi", "500M", a number) in bytes; undefined when absent. */
function quantityBytes(q) {
  if (q === undefined || q === null) return undefined;
  const m = /^([0-9.]+)(Ki|Mi|Gi|Ti|k|M|G|T|m)?$/.exec(String(q));
  if (!m) return Number.NaN;
  const units = {
    k: 1e3,
    M: 1e6,
    G: 1e9,
    T: 1e12,
    Ki: 2 ** 10,
    Mi: 2 ** 20,
    Gi: 2 ** 30,
    Ti: 2 ** 40,
    m: 1e-3,
  };
  return Number(m[1]) * (m[2] ? units[m[2]] : 1);
}
const workloads = [...byKind('Deployment'), ...byKind('StatefulSet')];
const configMap = byKind('ConfigMap')[0];
const shutdownMs = Number(configMap?.data?.SHUTDOWN_TIMEOUT_MS ?? 10000);

for (const w of workloads) {
  const problems = [];
  const pod = w.spec?.template?.spec ?? {};
  const podSc = pod.securityContext ?? {};
  for (const c of pod.containers ?? []) {
    const sc = c.securityContext ?? {};
    if (!c.livenessProbe) problems.push(`container ${c.name}: no livenessProbe`);
    if (!c.readinessProbe) problems.push(`container ${c.name}: no readinessProbe`);
    if (!c.resources?.requests?.cpu || !c.resources?.requests?.memory)
      problems.push(`container ${c.name}: no cpu/memory requests`);
    if (!c.resources?.limits?.memory) problems.push(`container ${c.name}: no memory limit`);
    if (!(sc.runAsNonRoot ?? podSc.runAsNonRoot)) problems.push(`container ${c.name}: runAsNonRoot not set`);
    if ((sc.runAsUser ?? podSc.runAsUser) === 0) problems.push(`container ${c.name}: runs as uid 0`);
    if (sc.readOnlyRootFilesystem !== true) problems.push(`container ${c.name}: root filesystem is writable`);
    if (sc.allowPrivilegeEscalation !== false)
      problems.push(`container ${c.name}: allowPrivilegeEscalation is not false`);
  }
  check(`${id(w)} has probes, resources and a non-root read-only security context`, problems);
}

// The four services: the right probes, graceful termination, metrics port.
for (const [svc, spec] of Object.entries(SERVICES)) {
  const problems = [];
  const d = byKind('Deployment').find((o) => componentOf(o) === svc);
  if (!d) {
    check(`${svc} is deployed`, [`no Deployment labelled app.kubernetes.io/component=${svc}`]);
    continue;
  }
  const pod = d.spec.template.spec;
  const c = pod.containers.find((x) => x.name === svc) ?? pod.containers[0];
  if (spec.grpcOnly) {
    // Over TLS (GRPC_TLS_CERT_FILE set), which the kubelet's gRPC probe does not speak: HTTP on the metrics port.
    const tls = (c.env ?? []).some((e) => e.name === 'GRPC_TLS_CERT_FILE');
    for (const [probe, path] of [
      ['livenessProbe', '/livez'],
      ['readinessProbe', '/readyz'],
    ]) {
      if (tls) {
        const get = c[probe]?.httpGet;
        if (get?.path !== path || get?.port !== 'metrics')
          problems.push(`${probe} is not GET ${path} on the metrics port (gRPC over TLS)`);
      } else if (c[probe]?.grpc?.port !== spec.grpc)
        problems.push(`${probe} is not a gRPC probe on ${spec.grpc}`);
    }
  } else {
    if (c.livenessProbe?.httpGet?.path !== '/livez') problems.push('livenessProbe is not GET /livez');
    if (c.readinessProbe?.httpGet?.path !== '/readyz') problems.push('readinessProbe is not GET /readyz');
  }
  const ports = Object.fromEntries((c.ports ?? []).map((p) => [p.name, p.containerPort]));
  if (spec.http && ports.http !== spec.http) problems.push(`http port is ${ports.http}, want ${spec.http}`);
  if (spec.grpc && ports.grpc !== spec.grpc) problems.push(`grpc port is ${ports.grpc}, want ${spec.grpc}`);
  if (!ports.metrics) problems.push('no metrics port');
  const preStop = c.lifecycle?.preStop;
  const sleepSeconds = preStop?.sleep?.seconds ?? Number(preStop?.exec?.command?.[1] ?? Number.NaN);
  if (!preStop || Number.isNaN(sleepSeconds)) problems.push('no preStop sleep');
  const grace = pod.terminationGracePeriodSeconds ?? 30;
  // A service's own deadline (its env) wins over the ConfigMap's.
  const ownMs = (c.env ?? []).find((e) => e.name === 'SHUTDOWN_TIMEOUT_MS')?.value;
  const deadlineMs = ownMs === undefined ? shutdownMs : Number(ownMs);
  if (grace * 1000 <= deadlineMs + (sleepSeconds || 0) * 1000) {
    problems.push(
      `terminationGracePeriodSeconds ${grace} does not cover preStop ${sleepSeconds}s + SHUTDOWN_TIMEOUT_MS ${deadlineMs}`,
    );
  }
  // The link runtime drains replies still being written: each may take the assistant's timeout.
  const assistantMs = Number(configMap?.data?.ASSISTANT_TIMEOUT_MS ?? 30000);
  if (svc === 'link-runtime' && deadlineMs <= assistantMs) {
    problems.push(`SHUTDOWN_TIMEOUT_MS ${deadlineMs} does not outlast ASSISTANT_TIMEOUT_MS ${assistantMs}`);
  }
  const mainJs = `${svc}/dist/main.js`;
  if (
    !(c.args ?? []).includes(mainJs) ||
    !(c.args ?? []).includes('@outreach/platform/dist/instrumentation.js')
  )
    problems.push(`does not run node --require @outreach/platform/dist/instrumentation.js ${mainJs}`);
  const svcObj = byKind('Service').find((o) => o.metadata.name === d.metadata.name);
  if (!svcObj) problems.push('no Service of the same name');
  if (!byKind('PodDisruptionBudget').some((o) => o.metadata.name === d.metadata.name))
    problems.push('no PodDisruptionBudget');
  const hpa = byKind('HorizontalPodAutoscaler').find((o) => o.spec?.scaleTargetRef?.name === d.metadata.name);
  if (!hpa && !(d.spec.replicas >= 1)) problems.push('neither a HorizontalPodAutoscaler nor a replica count');
  else if (hpa && hpa.apiVersion !== 'autoscaling/v2')
    problems.push(`HPA is ${hpa.apiVersion}, want autoscaling/v2`);
  if (hpa && d.spec.replicas !== undefined) problems.push('replicas is set although an HPA owns the count');
  check(`${svc}: probes, ports, graceful stop, Service, PDB and scaling`, problems);
}

// ---- gRPC transport --------------------------------------------------------------------------
// Every caller must speak what both gRPC servers take: TLS (GRPC_TLS_CA_FILE) only to a server
// with a certificate, plaintext only to one without, or one that takes both (a rollout's steps);
// and over TLS, a client certificate to a server that requires one (mutual TLS).
{
  const problems = [];
  const envOf = (svc) => new Map((containerOf(svc)?.env ?? []).map((e) => [e.name, e.value]));
  for (const server of Object.keys(SERVICES).filter((svc) => SERVICES[svc].grpc)) {
    const env = envOf(server);
    const servesTls = env.has('GRPC_TLS_CERT_FILE');
    const takesPlaintext = !servesTls || env.get('GRPC_TLS_ACCEPT_PLAINTEXT') === 'true';
    const asksCertificate = env.has('GRPC_TLS_CLIENT_CA_FILE');
    for (const caller of Object.keys(SERVICES)) {
      const callsTls = envOf(caller).has('GRPC_TLS_CA_FILE');
      if (callsTls && !servesTls) problems.push(`${caller} calls over TLS, ${server} serves plaintext only`);
      if (!callsTls && !takesPlaintext)
        problems.push(`${caller} calls in plaintext, ${server} serves TLS only`);
      if (callsTls && asksCertificate && !envOf(caller).has('GRPC_TLS_CLIENT_CERT_FILE'))
        problems.push(`${caller} presents no client certificate, ${server} requires one`);
    }
  }
  check('every gRPC caller speaks what the gRPC servers take', problems);
}

// ---- Ingress ---------------------------------------------------------------------------------
{
  const problems = [];
  const ingresses = byKind('Ingress');
  if (ingresses.length === 0) problems.push('no Ingress rendered');
  const want = { '/api': 'gateway', '/i': 'link-runtime', '/': 'campaign-service' };
  const routed = new Set();
  // A host's routes may come from several Ingresses (the links' own, with linkAnnotations).
  const byHost = new Map();
  for (const ing of ingresses)
    for (const rule of ing.spec?.rules ?? [])
      for (const x of rule.http?.paths ?? []) {
        if (!byHost.has(rule.host)) byHost.set(rule.host, []);
        byHost.get(rule.host).push({ ing, x });
      }
  for (const [host, paths] of byHost) {
    // A dashboard host serves only the dashboard; every other host serves the links and the API,
    // and the dashboard too unless it has hosts of its own.
    const isDashboardHost = dashboardHosts.includes(host);
    const expected = isDashboardHost ? ['/'] : dashboardHosts.length ? ['/api', '/i'] : Object.keys(want);
    for (const { ing, x } of paths) {
      if (!expected.includes(x.path)) problems.push(`${id(ing)} host ${host}: unexpected route ${x.path}`);
    }
    for (const p of expected) {
      const svc = want[p];
      const hits = paths.filter(({ x }) => x.path === p);
      if (hits.length !== 1) {
        problems.push(
          hits.length ? `host ${host}: ${hits.length} routes for ${p}` : `host ${host}: no route for ${p}`,
        );
        continue;
      }
      const { ing, x: hit } = hits[0];
      routed.add(p);
      const backend = hit.backend?.service?.name ?? '';
      if (!backend.endsWith(`-${svc}`)) problems.push(`${id(ing)}: ${p} goes to ${backend}, want *-${svc}`);
      if (hit.pathType !== 'Prefix') problems.push(`${id(ing)}: ${p} pathType is ${hit.pathType}`);
      const target = byKind('Service').find((s) => s.metadata.name === backend);
      const portName = hit.backend?.service?.port?.name;
      if (!target) problems.push(`${id(ing)}: ${p} backend Service ${backend} is not rendered`);
      else if (portName && !target.spec.ports.some((x) => x.name === portName))
        problems.push(`${id(ing)}: ${p} backend ${backend} has no port ${portName}`);
      if (p === '/i' && linksAnnotation) {
        const [, key, value] = linksAnnotation;
        if (ing.metadata?.annotations?.[key] !== value)
          problems.push(`${id(ing)}: routes /i without the annotation ${key}: "${value}"`);
        const others = (ing.spec?.rules ?? []).flatMap((r) => (r.http?.paths ?? []).map((y) => y.path));
        if (others.some((o) => o !== '/i'))
          problems.push(`${id(ing)}: routes /i together with ${others.filter((o) => o !== '/i').join(', ')}`);
      }
    }
  }
  for (const p of Object.keys(want)) if (!routed.has(p)) problems.push(`no host routes ${p}`);
  for (const h of dashboardHosts) {
    if (!ingresses.some((ing) => (ing.spec?.rules ?? []).some((r) => r.host === h)))
      problems.push(`dashboard host ${h} is not routed`);
  }
  check('Ingress routes /api to gateway, /i to link-runtime and / to campaign-service', problems);
}

// ---- references: every Secret/ConfigMap a pod reads is rendered or declared external ----
{
  const problems = [];
  const rendered = new Set(objects.filter((o) => o.kind === 'Secret').map((o) => o.metadata.name));
  const configMaps = new Set(byKind('ConfigMap').map((o) => o.metadata.name));
  const external = new Set(
    (args.find((a) => a.startsWith('--external-secrets=')) ?? '=').split('=')[1].split(','),
  );
  const podOwners = [...workloads, ...byKind('Job')];
  for (const w of podOwners) {
    const pod = w.spec.template.spec;
    for (const c of [...(pod.containers ?? []), ...(pod.initContainers ?? [])]) {
      for (const e of c.env ?? []) {
        const ref = e.valueFrom?.secretKeyRef;
        if (!ref) continue;
        const secret = objects.find((o) => o.kind === 'Secret' && o.metadata.name === ref.name);
        if (secret && !(ref.key in (secret.data ?? {})))
          problems.push(`${id(w)}: ${e.name} reads key ${ref.key} missing from Secret ${ref.name}`);
        if (!rendered.has(ref.name) && !external.has(ref.name))
          problems.push(`${id(w)}: ${e.name} reads Secret ${ref.name} that is neither rendered nor declared`);
      }
      for (const f of c.envFrom ?? []) {
        if (f.configMapRef && !configMaps.has(f.configMapRef.name))
          problems.push(`${id(w)}: ConfigMap ${f.configMapRef.name} is not rendered`);
      }
    }
  }
  const job = byKind('Job').find((j) => j.metadata.name.endsWith('-migrate'));
  if (!job) problems.push('no migration Job');
  else {
    const hook = job.metadata.annotations?.['helm.sh/hook'] ?? '';
    if (!hook.includes('pre-upgrade')) problems.push(`migration Job hook is "${hook}", want pre-upgrade`);
    if (!/(pre|post)-install/.test(hook))
      problems.push(`migration Job hook is "${hook}", want an install hook`);
    const cmd = job.spec.template.spec.containers[0].command ?? [];
    if (cmd.join(' ') !== 'node scripts/migrate.js') problems.push(`migration runs "${cmd.join(' ')}"`);
  }
  check('pods read only rendered or declared Secrets; migration hook Job present', problems);
}

// ---- the internal token: every service's gRPC calls carry it and its gRPC server requires it ----
// One missing from a service's pod refuses its calls (or, outside production, opens its server);
// two services reading it from different places hold different tokens and refuse each other.
{
  const problems = [];
  const sources = new Map();
  for (const svc of Object.keys(SERVICES)) {
    const d = byKind('Deployment').find((o) => componentOf(o) === svc);
    if (!d) continue;
    const pod = d.spec.template.spec;
    const c = pod.containers.find((x) => x.name === svc) ?? pod.containers[0];
    const entries = (c.env ?? []).filter((e) => e.name === 'INTERNAL_TOKEN');
    const ref = entries[0]?.valueFrom?.secretKeyRef;
    if (entries.length !== 1 || !ref) {
      problems.push(
        entries.length > 1
          ? `${svc}: INTERNAL_TOKEN is set ${entries.length} times`
          : `${svc}: no INTERNAL_TOKEN from a Secret`,
      );
      continue;
    }
    sources.set(svc, `${ref.name}/${ref.key}`);
    const secret = objects.find((o) => o.kind === 'Secret' && o.metadata.name === ref.name);
    const value = secret?.data?.[ref.key];
    if (value !== undefined && Buffer.from(value, 'base64').toString('utf8').length < 32)
      problems.push(`${svc}: INTERNAL_TOKEN in Secret ${ref.name} is shorter than 32 characters`);
  }
  if (new Set(sources.values()).size > 1)
    problems.push(
      `the services read INTERNAL_TOKEN from different places: ${[...sources].map(([s, r]) => `${s} ${r}`).join(', ')}`,
    );
  check('every service gets the same INTERNAL_TOKEN from a Secret', problems);
}

// ---- the second internal token of a rotation: both gRPC servers or neither, never the first ----
// On one gRPC server only, step 2 of a rotation would have the other refuse every caller still on
// the previous token; on a service without a gRPC server it does nothing (no client sends it); read
// from INTERNAL_TOKEN's own Secret key, or holding its value, it is the same token, which the
// services refuse at start.
{
  const problems = [];
  const servers = Object.keys(SERVICES).filter((svc) => SERVICES[svc].grpc);
  const stored = (ref) => {
    const secret = objects.find((o) => o.kind === 'Secret' && o.metadata.name === ref?.name);
    const value = secret?.data?.[ref?.key];
    return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
  };
  const sources = new Map();
  for (const svc of Object.keys(SERVICES)) {
    const c = containerOf(svc);
    const entries = (c?.env ?? []).filter((e) => e.name === 'INTERNAL_TOKEN_ALSO_ACCEPTED');
    if (entries.length === 0) continue;
    if (!servers.includes(svc)) {
      problems.push(`${svc}: INTERNAL_TOKEN_ALSO_ACCEPTED on a service without a gRPC server`);
      continue;
    }
    const ref = entries[0].valueFrom?.secretKeyRef;
    if (entries.length !== 1 || !ref) {
      problems.push(
        entries.length > 1
          ? `${svc}: INTERNAL_TOKEN_ALSO_ACCEPTED is set ${entries.length} times`
          : `${svc}: INTERNAL_TOKEN_ALSO_ACCEPTED not from a Secret`,
      );
      continue;
    }
    sources.set(svc, `${ref.name}/${ref.key}`);
    const primary = (c.env ?? []).find((e) => e.name === 'INTERNAL_TOKEN')?.valueFrom?.secretKeyRef;
    if (primary && primary.name === ref.name && primary.key === ref.key)
      problems.push(
        `${svc}: INTERNAL_TOKEN_ALSO_ACCEPTED reads INTERNAL_TOKEN's own key ${ref.name}/${ref.key}`,
      );
    const value = stored(ref);
    if (value !== undefined && value.length < 32)
      problems.push(
        `${svc}: INTERNAL_TOKEN_ALSO_ACCEPTED in Secret ${ref.name} is shorter than 32 characters`,
      );
    if (value !== undefined && value === stored(primary))
      problems.push(`${svc}: INTERNAL_TOKEN_ALSO_ACCEPTED in Secret ${ref.name} is INTERNAL_TOKEN itself`);
  }
  if (sources.size > 0) {
    for (const svc of servers)
      if (containerOf(svc) && !sources.has(svc) && !problems.some((p) => p.startsWith(`${svc}:`)))
        problems.push(
          `${svc}: no INTERNAL_TOKEN_ALSO_ACCEPTED, unlike ${[...sources.keys()].join(', ')}: its gRPC server would refuse the other token's callers`,
        );
    if (new Set(sources.values()).size > 1)
      problems.push(
        `the gRPC servers read INTERNAL_TOKEN_ALSO_ACCEPTED from different places: ${[...sources].map(([s, r]) => `${s} ${r}`).join(', ')}`,
      );
  }
  check(
    'INTERNAL_TOKEN_ALSO_ACCEPTED reaches both gRPC servers alike or neither, and is not INTERNAL_TOKEN',
    problems,
  );
}

// ---- volumes: every mount has its volume, every file a variable names is mounted ------------
// A file the pod is told to read (SAFETY_RULES_FILE, a CA in NODE_EXTRA_CA_CERTS) only exists in
// the read-only image if a volume brings it: a path outside every mount fails at start, or, for
// NODE_EXTRA_CA_CERTS, is skipped with a warning and TLS to the database fails later.
{
  const problems = [];
  const fileVariable = /^(NODE_EXTRA_CA_CERTS|[A-Z0-9_]+_FILE)$/;
  for (const w of [...workloads, ...byKind('Job')]) {
    const pod = w.spec?.template?.spec ?? {};
    const claims = (w.spec?.volumeClaimTemplates ?? []).map((v) => v.metadata?.name);
    const volumes = new Set([...(pod.volumes ?? []).map((v) => v.name), ...claims]);
    for (const c of [...(pod.containers ?? []), ...(pod.initContainers ?? [])]) {
      const mounts = c.volumeMounts ?? [];
      for (const m of mounts)
        if (!volumes.has(m.name))
          problems.push(`${id(w)} ${c.name}: mount ${m.mountPath} names no volume ${m.name}`);
      // What the container sees: its ConfigMaps' variables, then its own env (which wins).
      const env = {};
      for (const f of c.envFrom ?? []) {
        const cm = byKind('ConfigMap').find((o) => o.metadata.name === f.configMapRef?.name);
        Object.assign(env, cm?.data ?? {});
      }
      for (const e of c.env ?? []) if (e.value !== undefined) env[e.name] = e.value;
      for (const [name, value] of Object.entries(env)) {
        if (!fileVariable.test(name) || !String(value).startsWith('/')) continue;
        const inMount = mounts.some(
          (m) => value === m.mountPath || value.startsWith(m.mountPath.replace(/\/?$/, '/')),
        );
        if (!inMount) problems.push(`${id(w)} ${c.name}: ${name}=${value} lies in no volume it mounts`);
      }
    }
  }
  check('every volumeMount has its volume; every file a variable names is mounted', problems);
}

// ---- trial stores and ServiceMonitors --------------------------------------------------------
{
  const names = workloads.map(componentOf);
  const stores = ['postgresql', 'redis', 'nats'];
  const present = stores.filter((s) => names.includes(s));
  check(
    expectTrial ? 'trial PostgreSQL, Redis and NATS are rendered' : 'no trial stores are rendered',
    expectTrial
      ? stores.filter((s) => !present.includes(s)).map((s) => `missing ${s}`)
      : present.map((s) => `unexpected trial ${s}`),
  );
  // The trial PostgreSQL must take every connection the services may open at once: each pod that
  // may run (the HPA's maximum, or the replicas, plus the rollout's surge) with a full pool and the
  // one connection it migrates on at start, plus the migration Job's and the superuser's 3.
  const pg = workloads.find((o) => o.kind === 'StatefulSet' && componentOf(o) === 'postgresql');
  if (pg) {
    const problems = [];
    const args = (pg.spec.template.spec.containers[0].args ?? []).join(' ');
    const maxConnections = Number(/max_connections=(\d+)/.exec(args)?.[1] ?? 100);
    let need = 3 + 2;
    const sums = [];
    for (const svc of Object.keys(SERVICES)) {
      // Which services open pools, from their own code.
      const server = fs.readFileSync(path.join(__dirname, '..', svc, 'src/server.ts'), 'utf8');
      if (!/\bcreatePool\(/.test(server)) continue;
      const d = byKind('Deployment').find((o) => componentOf(o) === svc);
      if (!d) continue;
      const hpa = byKind('HorizontalPodAutoscaler').find(
        (o) => o.spec?.scaleTargetRef?.name === d.metadata.name,
      );
      const most = hpa ? hpa.spec.maxReplicas : (d.spec.replicas ?? 1);
      const surge = String(d.spec.strategy?.rollingUpdate?.maxSurge ?? '25%');
      const pods =
        most + (surge.endsWith('%') ? Math.ceil((most * Number.parseInt(surge, 10)) / 100) : Number(surge));
      const c = d.spec.template.spec.containers[0];
      const pool = Number(
        (c.env ?? []).find((e) => e.name === 'DATABASE_POOL_SIZE')?.value ??
          configMap?.data?.DATABASE_POOL_SIZE ??
          10,
      );
      need += pods * (pool + 1);
      sums.push(`${svc} ${pods} pods x (${pool} + 1)`);
    }
    if (maxConnections < need)
      problems.push(
        `max_connections is ${maxConnections}; the services may open ${need}: ${sums.join(', ')} + 5`,
      );
    check('the trial PostgreSQL takes every connection the services may open at their maximum', problems);
  }
  // The trial Redis must refuse writes at a full memory rather than be OOM-killed at its limit,
  // losing every chat history, or evict keys (usage counters among them, which would be rebuilt
  // low): noeviction, and a maxmemory about 80 % of its memory limit, leaving its own overhead.
  const redis = workloads.find((o) => o.kind === 'Deployment' && componentOf(o) === 'redis');
  if (redis) {
    const problems = [];
    const c = redis.spec.template.spec.containers[0];
    const args = (c.args ?? []).map(String);
    const arg = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
    if (arg('--maxmemory-policy') !== 'noeviction')
      problems.push(`--maxmemory-policy is ${arg('--maxmemory-policy') ?? 'unset'}, not noeviction`);
    const limit = quantityBytes(c.resources?.limits?.memory);
    const maxmemory = arg('--maxmemory') === undefined ? undefined : Number(arg('--maxmemory'));
    if (limit !== undefined) {
      if (maxmemory === undefined)
        problems.push(`no --maxmemory under its ${c.resources.limits.memory} limit`);
      else if (!(maxmemory >= 0.75 * limit && maxmemory <= 0.85 * limit))
        problems.push(
          `--maxmemory ${maxmemory} is not about 80 % of its ${c.resources.limits.memory} limit (${limit} bytes)`,
        );
    }
    check('the trial Redis refuses writes (noeviction) at about 80 % of its memory limit', problems);
  }
  const monitors = byKind('ServiceMonitor').length;
  if (expectServiceMonitor)
    check('a ServiceMonitor per service', monitors === 4 ? [] : [`${monitors} ServiceMonitors`]);
}

// ---- NetworkPolicies ------------------------------------------------------------------------
// Each service's pods must stay reachable on every port they declare, their gRPC port only from
// the services whose code calls it, and each trial store from every pod that is given its URL.
if (expectNetworkPolicies) {
  const policies = byKind('NetworkPolicy');
  const policyOf = (labels) =>
    policies.find((p) => {
      const sel = p.spec?.podSelector?.matchLabels ?? {};
      return Object.keys(labels).length > 0 && Object.entries(labels).every(([k, v]) => sel[k] === v);
    });
  const release = workloads[0]?.metadata?.labels?.['app.kubernetes.io/instance'];
  /** The components a rule's peers admit, or null when it admits more than this release's pods. */
  const admitted = (rule) => {
    if (!rule.from?.length) return null;
    const components = new Set();
    for (const peer of rule.from) {
      const sel = peer.podSelector;
      if (
        !sel ||
        peer.namespaceSelector ||
        peer.ipBlock ||
        sel.matchLabels?.['app.kubernetes.io/instance'] !== release
      )
        return null;
      const named = sel.matchLabels?.['app.kubernetes.io/component'];
      if (named) components.add(named);
      for (const e of sel.matchExpressions ?? [])
        if (e.key === 'app.kubernetes.io/component' && e.operator === 'In')
          for (const v of e.values) components.add(v);
    }
    return components;
  };
  const rulesFor = (policy, port) =>
    (policy.spec?.ingress ?? []).filter(
      (r) => !r.ports || r.ports.some((p) => p.port === port.name || p.port === port.containerPort),
    );
  // Who calls each gRPC service, read from the services' own configuration.
  const callers = {};
  for (const svc of Object.keys(SERVICES)) {
    const config = fs.readFileSync(path.join(__dirname, '..', svc, 'src/config.ts'), 'utf8');
    for (const [, target] of config.matchAll(/\b([A-Z]+)_SERVICE_ADDR\b/g)) {
      const callee = `${target.toLowerCase()}-service`;
      callers[callee] ??= new Set();
      callers[callee].add(svc);
    }
  }
  const problems = [];
  for (const svc of Object.keys(SERVICES)) {
    const d = byKind('Deployment').find((o) => componentOf(o) === svc);
    if (!d) continue;
    const policy = policyOf(d.spec.selector.matchLabels);
    if (!policy) {
      problems.push(`${svc}: no NetworkPolicy selects its pods`);
      continue;
    }
    if (!(policy.spec.policyTypes ?? []).includes('Ingress'))
      problems.push(`${id(policy)}: not an Ingress policy`);
    for (const port of d.spec.template.spec.containers[0].ports ?? []) {
      const rules = rulesFor(policy, port);
      if (rules.length === 0) {
        problems.push(`${svc}: port ${port.name} is admitted by no rule`);
        continue;
      }
      if (port.name !== 'grpc') continue;
      const want = [...(callers[svc] ?? [])].sort();
      for (const rule of rules) {
        const got = admitted(rule);
        if (!got) problems.push(`${svc}: grpc is open beyond this release's pods`);
        else if ([...got].sort().join() !== want.join())
          problems.push(
            `${svc}: grpc admits [${[...got].sort().join(', ')}], its callers are [${want.join(', ')}]`,
          );
      }
    }
  }
  // Each trial store admits every pod given its URL (rendered env), and only this release's pods.
  const storeOf = { DATABASE_URL: 'postgresql', REDIS_URL: 'redis', NATS_URL: 'nats' };
  for (const store of Object.values(storeOf)) {
    const w = workloads.find((o) => componentOf(o) === store);
    if (!w) continue;
    const policy = policyOf(w.spec.selector.matchLabels);
    if (!policy) {
      problems.push(`trial ${store}: no NetworkPolicy selects its pods`);
      continue;
    }
    const port = w.spec.template.spec.containers[0].ports[0];
    const users = [...workloads, ...byKind('Job')].filter((o) =>
      (o.spec.template.spec.containers ?? []).some((c) =>
        (c.env ?? []).some((e) => e.valueFrom?.secretKeyRef && storeOf[e.name] === store),
      ),
    );
    for (const rule of rulesFor(policy, port)) {
      const got = admitted(rule);
      if (!got) problems.push(`trial ${store}: ${port.name} is open beyond this release's pods`);
      else
        for (const u of users) {
          const component = componentOf(u.spec.template);
          if (!got.has(component))
            problems.push(`trial ${store}: ${component} reads its URL but is not admitted`);
        }
    }
    if (rulesFor(policy, port).length === 0)
      problems.push(`trial ${store}: port ${port.name} is admitted by no rule`);
  }
  check(
    'NetworkPolicies: every service port reachable, gRPC only from its callers, stores only from their users',
    problems,
  );
} else {
  const policies = byKind('NetworkPolicy').length;
  check('no NetworkPolicy is rendered', policies === 0 ? [] : [`${policies} NetworkPolicies`]);
}

// ---- report ----------------------------------------------------------------------------------
checks.report();
