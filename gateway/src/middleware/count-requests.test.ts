import Router from '@koa/router';
import { AppError, createLogger, createMetrics, requestContext } from '@outreach/platform';
import Koa from 'koa';
import { countRequests } from './count-requests';

test('counts by method, route template and the final status (errors included)', async () => {
  const metrics = createMetrics('unit');
  const app = new Koa();
  app.use(countRequests(metrics));
  app.use(requestContext(createLogger('unit', 'silent')));
  const router = new Router();
  router.get('/items/:id', (ctx) => {
    if (ctx.params.id === 'bad') throw new AppError('not_found');
    ctx.body = {};
  });
  app.use(router.routes());
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  try {
    await fetch(`${url}/items/1`);
    await fetch(`${url}/items/2`);
    await fetch(`${url}/items/bad`);
    await fetch(`${url}/random/${Math.random()}`);
    const text = await metrics.registry.metrics();
    expect(text).toMatch(
      /http_requests_total\{method="GET",route="\/items\/:id",status="200",service="unit"\} 2/,
    );
    expect(text).toMatch(
      /http_requests_total\{method="GET",route="\/items\/:id",status="404",service="unit"\} 1/,
    );
    expect(text).toMatch(/route="unmatched",status="404"/);
  } finally {
    server.close();
  }
});

test('labels a request refused before routing with the template it was meant for', async () => {
  const metrics = createMetrics('unit');
  const app = new Koa();
  const router = new Router();
  router.get('/items/:id', (ctx) => {
    ctx.body = {};
  });
  app.use(countRequests(metrics, [router]));
  app.use(requestContext(createLogger('unit', 'silent')));
  app.use(async (ctx, next) => {
    if (ctx.get('x-refuse')) throw new AppError('rate_limited');
    await next();
  });
  app.use(router.routes());
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  try {
    await fetch(`${url}/items/1`, { headers: { 'x-refuse': '1' } });
    await fetch(`${url}/items/1`, { method: 'POST', headers: { 'x-refuse': '1' } });
    await fetch(`${url}/other`, { headers: { 'x-refuse': '1' } });
    const text = await metrics.registry.metrics();
    expect(text).toMatch(
      /http_requests_total\{method="GET",route="\/items\/:id",status="429",service="unit"\} 1/,
    );
    expect(text).toMatch(
      /http_requests_total\{method="POST",route="unmatched",status="429",service="unit"\} 1/,
    );
    expect(text).toMatch(
      /http_requests_total\{method="GET",route="unmatched",status="429",service="unit"\} 1/,
    );
  } finally {
    server.close();
  }
});
