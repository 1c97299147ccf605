import { serveMiddleware, withGrant } from '../../test/support/koa';
import { requireScope } from './require-scope';

test('refuses a key without the scope, naming it', async () => {
  const ok = await serveMiddleware([
    withGrant({ scopes: ['recipients:write'] }),
    requireScope('recipients:write'),
  ]);
  const no = await serveMiddleware([
    withGrant({ scopes: ['recipients:read'] }),
    requireScope('recipients:write'),
  ]);
  try {
    expect((await fetch(`${ok.url}/p/x`)).status).toBe(200);
    const r = await fetch(`${no.url}/p/x`);
    expect(r.status).toBe(403);
    expect(await r.json()).toMatchObject({
      code: 'forbidden',
      details: { requiredScope: 'recipients:write' },
    });
  } finally {
    await ok.close();
    await no.close();
  }
});
