// Baseline: a bare node:http server answering a small JSON body.
const http = require('node:http');

const body = JSON.stringify({ id: 'rcp_baseline', ok: true });
http
  .createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  })
  .listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));
