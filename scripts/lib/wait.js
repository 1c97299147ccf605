// Waiting for services to become ready: HTTP /readyz, or grpc.health.v1 for gRPC-only services.
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

module.exports = { waitHttp, waitGrpc };
