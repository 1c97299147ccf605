// Waiting for services to become ready (HTTP /readyz, or grpc.health.v1 for gRPC-only services),
// and for the ports they will listen on to be free; picking free ports for them.
const fs = require('node:fs');
const net = require('node:net');
const grpc = require('@grpc/grpc-js');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Resolves once `url` answers 200; rejects after `timeoutMs`. */
async function waitHttp(url, timeoutMs = 30_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      if ((await fetch(url)).status === 200) return;
    } catch {}
    await sleep(100);
  }
  throw new Error(`${url} did not become ready within ${timeoutMs} ms`);
}

/** Resolves once the gRPC server at `address` reports SERVING; rejects after `timeoutMs`. */
async function waitGrpc(address, timeoutMs = 30_000) {
  const { loadHealthProto } = require('@outreach/contracts');
  const Health = loadHealthProto().grpc.health.v1.Health;
  const client = new Health(address, grpc.credentials.createInsecure());
  const until = Date.now() + timeoutMs;
  try {
    while (Date.now() < until) {
      const status = await new Promise((resolve) =>
        client.Check({}, { deadline: Date.now() + 1000 }, (err, res) => resolve(err ? 'DOWN' : res.status)),
      );
      if (status === 'SERVING') return;
      await sleep(100);
    }
  } finally {
    client.close();
  }
  throw new Error(`gRPC ${address} did not become SERVING within ${timeoutMs} ms`);
}

/** Whether `port` can be listened on at `host` now, as a service would (Node sets SO_REUSEADDR). */
function canListen(port, host) {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen({ port, host }, () => probe.close(() => resolve(true)));
  });
}

/**
 * Waits until every port of `ports` ({ name: the variable that sets it, port }) can be listened
 * on at `host`, telling `say` once about each one it waits for; rejects after `timeoutMs` naming
 * a port still taken and its variable. 50051 and 50052 lie in Linux's ephemeral range
 * (32768–60999), so right after another run an outgoing connection may hold one for a while.
 */
async function waitForPorts(ports, { host = '0.0.0.0', timeoutMs = 30_000, say = console.log } = {}) {
  const until = Date.now() + timeoutMs;
  for (const { name, port } of ports) {
    let told = false;
    while (!(await canListen(port, host))) {
      if (Date.now() >= until)
        throw new Error(
          `port ${port} is in use: stop what holds it (ss -ltnp 'sport = :${port}'), or set ${name} to another port`,
        );
      if (!told) say(`  port ${port} (${name}) is in use; waiting for it to free up...`);
      told = true;
      await sleep(200);
    }
  }
}

/** Ports this process's freePort has handed out. */
const handedOut = new Set();

/** The lowest port Linux hands out to outgoing connections and `listen(0)`; read once, on first use. */
let ephemeralLowCached;
function ephemeralLow() {
  ephemeralLowCached ??= readEphemeralLow();
  return ephemeralLowCached;
}

function readEphemeralLow() {
  try {
    return Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  } catch {
    return 32768;
  }
}

/**
 * A TCP port on 127.0.0.1 that is free now and, unlike one from `listen(0)`, stays free until the
 * service started next binds it: it lies below the kernel's ephemeral range, which outgoing
 * connections and every other `listen(0)` draw from (a port from that range was once taken
 * between the pick and a gRPC service's bind: EADDRINUSE in a test run).
 */
async function freePort() {
  const first = 10_000;
  const low = ephemeralLow();
  if (low - first >= 1_000) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = first + Math.floor(Math.random() * (low - first));
      // A port handed out a moment ago is free until its service binds it: never hand it out
      // twice, and claim it before probing, as calls made together probe at the same time.
      if (handedOut.has(port)) continue;
      handedOut.add(port);
      if (await canListen(port, '127.0.0.1')) return port;
      handedOut.delete(port);
    }
  }
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

module.exports = { waitHttp, waitGrpc, waitForPorts, freePort };
