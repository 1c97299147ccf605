// Waiting for services to become ready (HTTP /readyz, or grpc.health.v1 for gRPC-only services),
// and for the ports they will listen on to be free.
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

module.exports = { waitHttp, waitGrpc, waitForPorts };
