// Helpers for the benchmark: child-process servers and load generator runs (wrk or autocannon).
const { execFile, execFileSync, fork, spawn } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const autocannon = require('autocannon');

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
          // Gone already: exited, or killed by a signal (exitCode stays null then).
          if (c.exitCode !== null || c.signalCode !== null) return resolve();
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
  if (pid === process.pid || comm === 'wrk') return 'load generator';
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

/** CPU seconds used so far by each process on the machine, by pid, with its label (see processLabel); null off Linux. */
function processCpu() {
  let pids;
  try {
    pids = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return null;
  }
  const byPid = new Map();
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
    const pid = Number(dir);
    // utime and stime; for this process also its reaped children's (wrk runs have ended by now).
    const own = pid === process.pid ? [11, 12, 13, 14] : [11, 12];
    const seconds = own.reduce((n, i) => n + Number(fields[i]), 0) / TICKS_PER_SECOND;
    byPid.set(pid, { label: processLabel(pid, comm), seconds });
  }
  return byPid;
}

/**
 * Microseconds of CPU per request of each label whose processes used any, largest first. Counted
 * per process, so that one exiting during the round (a PostgreSQL backend whose pool closed an
 * idle connection) takes none of its earlier CPU off the others of its label; one started during
 * the round counts all it used. What a process used before exiting mid-round is not seen.
 */
function cpuPerRequest(before, after, total, backendNames = new Map()) {
  if (!before || !after || !total) return null;
  const used = new Map();
  for (const [pid, { label: processName, seconds }] of after) {
    // A PostgreSQL backend goes by the client it served (its application_name), when it has one.
    const client = processName === 'postgres' ? backendNames.get(pid) : undefined;
    const label = client ? `postgres (${client})` : processName;
    const delta = seconds - (before.get(pid)?.seconds ?? 0);
    if (delta > 0) used.set(label, (used.get(label) ?? 0) + delta);
  }
  const rows = [...used].map(([label, seconds]) => [label, round((seconds * 1e6) / total)]);
  return Object.fromEntries(rows.sort((a, b) => b[1] - a[1]).filter(([, us]) => us >= 0.5));
}

/** Runs autocannon in this process; figures as `load` returns them. */
async function runAutocannon({ paths, ...opts }) {
  // The requests of all connections go through `paths` in turn, as with wrk (a list of
  // requests would have every connection walk the same paths in step, at the same time).
  let next = 0;
  const requests = paths && [
    { setupRequest: (request) => ({ ...request, path: paths[next++ % paths.length] }) },
  ];
  const result = await autocannon(paths ? { ...opts, requests } : opts);
  return {
    requestsPerSec: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    total: result.requests.total,
  };
}

/**
 * Requests each of `paths` (of `url`'s origin) exactly once, `connections` at a time, from this
 * process over keep-alive connections; figures as `load` returns them. For work that happens once
 * per path (a link's first lookup), which a load generator running for a duration cannot count.
 */
async function runEachOnce({ url, paths, method = 'GET', headers = {}, body, connections }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const latencies = [];
  let non2xx = 0;
  let errors = 0;
  let next = 0;
  const one = (target) =>
    new Promise((resolve) => {
      const began = process.hrtime.bigint();
      const req = http.request(target, { method, headers, agent }, (res) => {
        res.resume();
        res.on('end', () => {
          latencies.push(Number(process.hrtime.bigint() - began) / 1e6);
          if (res.statusCode < 200 || res.statusCode > 299) non2xx++;
          resolve();
        });
      });
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end(body);
    });
  const worker = async () => {
    while (next < paths.length) await one(new URL(paths[next++], url));
  };
  const began = process.hrtime.bigint();
  await Promise.all(Array.from({ length: Math.min(connections, paths.length) }, worker));
  const seconds = Number(process.hrtime.bigint() - began) / 1e9;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q) => round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0);
  return {
    requestsPerSec: round(paths.length / seconds),
    p50: at(0.5),
    p99: at(0.99),
    non2xx,
    errors,
    total: paths.length,
  };
}

/** A Lua long string holding `text` as it is (no escapes to get wrong). */
function luaString(text) {
  let level = '';
  while (text.includes(`]${level}]`)) level += '=';
  return `[${level}[${text}]${level}]`;
}

/** Milliseconds of a wrk duration such as `812.00us`, `3.21ms` or `1.02s`. */
function wrkMs(value, unit) {
  return Number(value) * { us: 0.001, ms: 1, s: 1000 }[unit];
}

/** Runs wrk, a native load generator, as its own process; figures as `load` returns them. */
async function runWrk({ url, paths, method = 'GET', headers = {}, body, connections, duration }) {
  const lines = [`wrk.method = ${luaString(method)}`];
  if (body !== undefined) lines.push(`wrk.body = ${luaString(body)}`);
  // Spaced: `headers[[[` would open a long string, a call instead of an index.
  for (const [name, value] of Object.entries(headers))
    lines.push(`wrk.headers[ ${luaString(name)} ] = ${luaString(value)}`);
  if (paths) {
    // One thread, one Lua state: the requests of all connections go through `paths` in turn.
    lines.push(`local paths = { ${paths.map(luaString).join(', ')} }`, 'local i = 0');
    lines.push('request = function() i = i % #paths + 1; return wrk.format(nil, paths[i]) end');
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-wrk-'));
  const script = path.join(dir, 'request.lua');
  fs.writeFileSync(script, `${lines.join('\n')}\n`);
  try {
    const args = ['-t1', `-c${connections}`, `-d${duration}s`, '--latency', '-s', script, url];
    const out = await new Promise((resolve, reject) =>
      // wrk goes on with a plain GET when its script fails, saying so only on stderr.
      execFile('wrk', args, (err, stdout, stderr) =>
        err || stderr ? reject(new Error(stderr || err.message)) : resolve(stdout),
      ),
    );
    const figure = (re) => {
      const m = re.exec(out);
      if (!m) throw new Error(`wrk printed no ${re}:\n${out}`);
      return m;
    };
    const p50 = figure(/^\s+50%\s+([\d.]+)(us|ms|s)\s*$/m);
    const p99 = figure(/^\s+99%\s+([\d.]+)(us|ms|s)\s*$/m);
    const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
    return {
      requestsPerSec: Number(figure(/^Requests\/sec:\s+([\d.]+)/m)[1]),
      p50: round(wrkMs(p50[1], p50[2])),
      p99: round(wrkMs(p99[1], p99[2])),
      non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
      errors: socket ? socket.slice(1).reduce((n, x) => n + Number(x), 0) : 0,
      total: Number(figure(/^\s+(\d+) requests in/m)[1]),
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Whether wrk can be run here. */
function hasWrk() {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
    return true;
  } catch (err) {
    // wrk --version prints its usage and exits 1; only a missing binary is ENOENT.
    return err.code !== 'ENOENT';
  }
}

/**
 * Loads `url` (with `paths`, the paths of its origin in turn, one a request) with the chosen
 * generator (`wrk`, `autocannon`, or `each-once`: every path once, see runEachOnce) and returns
 * requests/s and latency percentiles (ms), with
 * non-2xx counted, and what each request cost the whole machine in CPU (every process: load
 * generator, services, stores), also per process, with the share of time the host took from this
 * machine: throughput drifts with the machine's speed, CPU per request much less so.
 */
async function load({ generator = 'autocannon', backendNames, ...opts }) {
  const request = { connections: 50, duration: 5, ...opts };
  // Asked before and after: a pool may open a connection during the round.
  const namesBefore = (await backendNames?.()) ?? new Map();
  const before = machineCpu();
  const processesBefore = processCpu();
  const run = { wrk: runWrk, autocannon: runAutocannon, 'each-once': runEachOnce }[generator];
  const result = await run(request);
  const after = machineCpu();
  const processesAfter = processCpu();
  const names = new Map([...namesBefore, ...((await backendNames?.()) ?? [])]);
  const { total } = result;
  return {
    ...result,
    cpuMicrosPerRequest: before && total ? round(((after.busy - before.busy) * 1e6) / total) : null,
    cpuMicrosByProcess: cpuPerRequest(processesBefore, processesAfter, total, names),
    stealPercent: before ? round(((after.steal - before.steal) * 100) / (after.all - before.all)) : null,
  };
}

const round = (x) => Math.round(x * 10) / 10;

/** The value given after `--name` on the command line, or undefined. */
function argText(name) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

/** The number given after `--name`, or `def`. */
function arg(name, def) {
  const text = argText(name);
  return text === undefined ? def : Number(text);
}

/** The median of `xs` (the lower of the middle two when even). */
function median(xs) {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

module.exports = { forkReady, spawnService, stopAll, load, hasWrk, arg, median };
