// Baseline: a bare Koa + @koa/router route that makes one unary gRPC call per request.
const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const loader = require('@grpc/proto-loader');
const Koa = require('koa');
const Router = require('@koa/router');

const def = grpc.loadPackageDefinition(loader.loadSync(path.join(__dirname, 'echo.proto')));
const client = new def.bench.Echo(process.env.ECHO_ADDR, grpc.credentials.createInsecure());
const router = new Router();
router.get('/echo/:id', async (ctx) => {
  ctx.body = await new Promise((resolve, reject) =>
    client.Echo({ id: ctx.params.id, payload: 'x' }, { deadline: Date.now() + 5000 }, (err, res) =>
      err ? reject(err) : resolve(res),
    ),
  );
});
const app = new Koa();
app.use(router.routes());
app.listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));
