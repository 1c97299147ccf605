import Router from '@koa/router';
import Koa from 'koa';
import { requestContext } from './http';
import { createLogger } from './logger';
import { routeNotFound } from './not-found';

test('405 with Allow for a known path, 404 for an unknown one', async () => {
  const app = new Koa();
  app.use(requestContext(createLogger('unit', 'silent')));
  const router = new Router();
  router.get('/things/:id', (ctx) => {
    ctx.body = {};
  });
  router.delete('/things/:id', (ctx) => {
    ctx.body = {};
  });
  app.use(router.routes());
  app.use(routeNotFound);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  try {
    const wrong = await fetch(`${url}/things/1`, { method: 'POST' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')?.split(', ').sort()).toEqual(['DELETE', 'GET', 'HEAD']);
    expect(((await wrong.json()) as { code: string }).code).toBe('method_not_allowed');
    const none = await fetch(`${url}/nothing`);
    expect(none.status).toBe(404);
    expect(((await none.json()) as { code: string }).code).toBe('not_found');
  } finally {
    server.close();
  }
});
