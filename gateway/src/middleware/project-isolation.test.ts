import { serveMiddleware, withGrant } from '../../test/support/koa';
import { projectIsolation } from './project-isolation';

test('a key reaches only its own project; others get 403 project_mismatch', async () => {
  const s = await serveMiddleware([withGrant({ projectId: 'prj_a' }), projectIsolation]);
  try {
    expect((await fetch(`${s.url}/p/prj_a`)).status).toBe(200);
    const other = await fetch(`${s.url}/p/prj_b`);
    expect(other.status).toBe(403);
    expect(await other.json()).toMatchObject({ code: 'forbidden', details: { reason: 'project_mismatch' } });
  } finally {
    await s.close();
  }
});
