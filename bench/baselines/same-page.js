// Baseline: a bare node:http server sending, for every request, the bytes and headers the link
// runtime sent for its page once (PAGE_BASE64 and PAGE_HEADERS): what answering with
// that page costs Node and the kernel at the least, with no link to resolve and nothing to decide.
const http = require('node:http');

const body = Buffer.from(process.env.PAGE_BASE64, 'base64');
// Name/value pairs, as the link runtime passes them to writeHead.
const headers = JSON.parse(process.env.PAGE_HEADERS);
http
  .createServer((_req, res) => {
    res.writeHead(200, headers);
    res.end(body);
  })
  .listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));
