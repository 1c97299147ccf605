import { http, type TestSystem } from './system';

/** Calls the campaign service's admin API and fails loudly on an unexpected status. */
export async function admin(
  sys: TestSystem,
  method: string,
  path: string,
  body?: unknown,
  expected = [200, 201],
) {
  const res = await http(method, `${sys.adminUrl}/admin/v1${path}`, { body, token: sys.adminToken });
  if (!expected.includes(res.status)) throw new Error(`${method} ${path} -> ${res.status} ${res.text}`);
  return res.body;
}

/** A project with a device, an API key of each scope set, and a draft campaign. */
export interface ProjectFixture {
  projectId: string;
  deviceId: string;
  campaignId: string;
  keys: { rw: string; read: string; write: string };
}

/** Creates a project, device, keys and a draft metered campaign starting in an hour. */
export async function createProject(
  sys: TestSystem,
  campaign: Record<string, unknown> = {},
  rateLimitPerMinute = 100_000,
): Promise<ProjectFixture> {
  const project = await admin(sys, 'POST', '/projects', { name: `p-${Math.random()}` });
  const p = `/projects/${project.id}`;
  const device = await admin(sys, 'POST', `${p}/devices`, { name: 'device', persona: 'You help customers.' });
  const key = async (scopes: string[]) =>
    (await admin(sys, 'POST', `${p}/api-keys`, { name: scopes.join('+'), scopes, rateLimitPerMinute }))
      .key as string;
  const c = await createCampaign(sys, project.id, device.id, campaign);
  return {
    projectId: project.id,
    deviceId: device.id,
    campaignId: c.id,
    keys: {
      rw: await key(['recipients:read', 'recipients:write']),
      read: await key(['recipients:read']),
      write: await key(['recipients:write']),
    },
  };
}

/** Creates a draft campaign (defaults: metered, starts in an hour, ends in a day). */
export async function createCampaign(
  sys: TestSystem,
  projectId: string,
  deviceId: string,
  fields: Record<string, unknown> = {},
) {
  return admin(sys, 'POST', `/projects/${projectId}/campaigns`, {
    name: 'campaign',
    deviceId,
    startDate: new Date(Date.now() + 3600_000).toISOString(),
    endDate: new Date(Date.now() + 86400_000).toISOString(),
    budgetMode: 'metered',
    ...fields,
  });
}

/** Polls `check` until it returns a truthy value or the timeout passes. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false>,
  timeoutMs = 3000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < until) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${(last as Error).message}` : ''}`);
}
