// Waiting for the ports `npm start`'s services listen on to be free.
const net = require('node:net');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

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

module.exports = { canListen, waitForPorts };
