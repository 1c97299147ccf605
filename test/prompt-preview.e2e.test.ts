/**
 * The admin API previews the exact system prompt of a recipient: the device persona, safety
 * rules, knowledge, then the recipient's instructions (append after the device's own custom
 * instructions, replace in their place), with placeholders already substituted.
 */
import { composeSystemPrompt, selectKnowledge } from '@outreach/contracts';
import { admin, createProject } from './support/fixtures';
import { http, startSystem, type TestSystem } from './support/system';

let sys: TestSystem;
afterAll(() => sys?.stop());
beforeAll(async () => {
  sys = await startSystem();
}, 60_000);

it('previews the prompt for append and replace, and only within the project', async () => {
  const fx = await createProject(sys);
  const other = await createProject(sys);
  const device = await admin(sys, 'PATCH', `/projects/${fx.projectId}/devices/${fx.deviceId}`, {
    persona: 'You are the Acme assistant.',
    customInstructions: 'DEVICE-OWN-INSTRUCTIONS',
    knowledge: [
      { title: 'Hours', content: 'Open 9 to 5.' },
      { title: 'Returns', content: 'Returns within 30 days.' },
    ],
  });
  const created = await http('POST', `${sys.gatewayUrl}/api/v1/projects/${fx.projectId}/recipients`, {
    token: fx.keys.rw,
    body: {
      campaignId: fx.campaignId,
      items: [
        { label: 'Ada', injectionInstructions: 'Greet {name}.' },
        {
          label: 'Bo',
          injectionMode: 'replace',
          injectionInstructions: 'Only talk about {meta.topic}.',
          metadata: { topic: 'returns' },
        },
      ],
    },
  });
  const [append, replace] = created.body.results;

  const preview = async (projectId: string, id: string, sample = '') =>
    http(
      'GET',
      `${sys.adminUrl}/admin/v1/projects/${projectId}/recipients/${id}/prompt?sample=${encodeURIComponent(sample)}`,
      {
        token: sys.adminToken,
      },
    );

  const a = await preview(fx.projectId, append.id);
  expect(a.status).toBe(200);
  expect(a.body.systemPrompt).toBe(
    composeSystemPrompt(
      device,
      { injectionMode: 'append', injectionInstructions: 'Greet Ada.' },
      selectKnowledge(device.knowledge, ''),
    ),
  );
  expect(a.body.systemPrompt).toContain('DEVICE-OWN-INSTRUCTIONS');
  expect(a.body.systemPrompt.indexOf('DEVICE-OWN-INSTRUCTIONS')).toBeLessThan(
    a.body.systemPrompt.indexOf('Greet Ada.'),
  );

  const r = await preview(fx.projectId, replace.id, 'what are your returns rules?');
  expect(r.body.systemPrompt).toContain('Only talk about returns.');
  expect(r.body.systemPrompt).not.toContain('DEVICE-OWN-INSTRUCTIONS');
  expect(r.body.knowledgeTitles[0]).toBe('Returns');

  expect((await preview(other.projectId, append.id)).status).toBe(404);
  const unauthorized = await http(
    'GET',
    `${sys.adminUrl}/admin/v1/projects/${fx.projectId}/recipients/${append.id}/prompt`,
  );
  expect(unauthorized.status).toBe(401);
});
