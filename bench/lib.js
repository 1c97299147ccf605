// Helpers for the benchmark: child-process servers and autocannon runs.
const { fork, spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const autocannon = require('autocannon');

/** A free loopback port. */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Forks a baseline script that sends 'ready' over IPC once listening. */
function forkReady(script, env) {
  return new Promise((resolve, reject) => {
    const child = fork(script, {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.once('message', (m) => (m === 'ready' ? resolve(child) : reject(new Error(String(m)))));
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

/**
 * Spawns a service process; `child.ready` resolves when `ready()` does. With
 * BENCH_PROFILE_DIR set, each service writes a V8 CPU profile there when it stops.
 */
function spawnService(name, args, env, ready) {
  const profile = process.env.BENCH_PROFILE_DIR
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`, `--cpu-prof-name=${name}.cpuprofile`]
    : [];
  const child = spawn(process.execPath, [...profile, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  child.once('exit', (code) => {
    if (code && !child.stopping) console.error(`${name} exited with ${code}`);
  });
  child.ready = ready().catch((err) => {
    throw new Error(`${name}: ${err.message}`);
  });
  return child;
}

/** Stops children and waits for them to exit. */
async function stopAll(children) {
  await Promise.all(
    children.map(
      (c) =>
        new Promise((resolve) => {
          if (c.exitCode !== null) return resolve();
          c.stopping = true;
          c.once('exit', resolve);
          c.kill('SIGTERM');
          setTimeout(() => c.kill('SIGKILL'), 5000).unref();
        }),
    ),
  );
}

// Linux reports /proc/stat in USER_HZ ticks, 100 per second on every architecture it runs on.
const TICKS_PER_SECOND = 100;

/** The whole machine's CPU time so far (seconds): busy, stolen by the host, and all; null off Linux. */
function machineCpu() {
  try {
    const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1);
    const [user, nice, system, idle, iowait, irq, softirq, steal = 0] = fields.map(Number);
    const busy = user + nice + system + irq + softirq;
    const all = busy + idle + iowait + steal;
    return { busy: busy / TICKS_PER_SECOND, steal: steal / TICKS_PER_SECOND, all: all / TICKS_PER_SECOND };
  } catch {
    return null;
  }
}

/** What a process is called in the results: a service's folder, a baseline's script, or its command. */
function processLabel(pid, comm) {
  if (pid === process.pid) return 'load generator';
  if (comm !== 'node') return comm.replace(/^(postgres|redis-server|nats-server).*$/, '$1');
  let argv;
  try {
    argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return 'node';
  }
  const script = argv.find((a) => a.endsWith('.js'));
  if (!script) return 'node';
  const parts = script.split('/');
  return parts[parts.length - 2] === 'dist'
    ? parts[parts.length - 3]
    : parts[parts.length - 1].replace(/\.js$/, '');
}

/** CPU seconds used so far by each process on the machine, summed per label (see processLabel); null off Linux. */
function processCpu() {
  let pids;
  try {
    pids = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return null;
  }
  const byLabel = new Map();
  for (const dir of pids) {
    let stat;
    try {
      stat = fs.readFileSync(`/proc/${dir}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // The command sits in parentheses and may hold spaces; the fields after it are fixed.
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const fields = stat.slice(close + 2).split(' ');
    const seconds = (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
    const label = processLabel(Number(dir), comm);
    byLabel.set(label, (byLabel.get(label) ?? 0) + seconds);
  }
  return byLabel;
}

/** Microseconds of CPU per request of each process that used any, largest first. */
function cpuPerRequest(before, after, total) {
  if (!before || !after || !total) return null;
  const rows = [];
  for (const [label, seconds] of after) {
    const used = seconds - (before.get(label) ?? 0);
    if (used > 0) rows.push([label, round((used * 1e6) / total)]);
  }
  return Object.fromEntries(rows.sort((a, b) => b[1] - a[1]).filter(([, us]) => us >= 0.5));
}

/**
 * Runs autocannon and returns requests/s and latency percentiles (ms), with non-2xx counted, and
 * what each request cost the whole machine in CPU (every process: load generator, services,
 * stores), also per process, with the share of time the host took from this machine: throughput drifts with the
 * machine's speed, CPU per request much less so.
 */
async function load(opts) {
  const before = machineCpu();
  const processesBefore = processCpu();
  const result = await autocannon({ connections: 50, duration: 5, ...opts });
  const after = machineCpu();
  const processesAfter = processCpu();
  const total = result.requests.total;
  return {
    requestsPerSec: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    total,
    cpuMicrosPerRequest: before && total ? round(((after.busy - before.busy) * 1e6) / total) : null,
    cpuMicrosByProcess: cpuPerRequest(processesBefore, processesAfter, total),
    stealPercent: before ? round(((after.steal - before.steal) * 100) / (after.all - before.all)) : null,
  };
}

const round = (x) => Math.round(x * 10) / 10;

module.exports = { freePort, forkReady, spawnService, stopAll, load };
