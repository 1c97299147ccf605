import type { DeviceSnapshot } from '@outreach/contracts';
import { ChatPages } from './chat-pages';
import { UI_STRINGS } from './i18n';
import { NonceSource } from './nonce';
import { renderPage } from './render';

const device = (version: number, title: string): DeviceSnapshot => ({
  id: 'dev_1',
  projectId: 'prj_1',
  name: 'Acme',
  isActive: true,
  ipAllowList: [],
  languages: ['en', 'de'],
  defaultLanguage: 'en',
  styling: { title },
  voice: { enabled: false },
  persona: '',
  customInstructions: '',
  knowledge: [],
  version,
});

describe('ChatPages', () => {
  it('sends exactly the rendered page, with the nonce in both slots', () => {
    const d = device(1, '<b>Acme</b>');
    const page = new ChatPages().page('de-CH, en;q=0.5', d);
    const html = page.shell.withNonce('Tm9uY2VOb25jZU5vbmNlTg==').toString('utf8');
    expect(page.lang).toBe('de');
    expect(html).toBe(
      renderPage({
        nonce: 'Tm9uY2VOb25jZU5vbmNlTg==',
        lang: 'de',
        strings: UI_STRINGS.de,
        device: d,
        body: { kind: 'chat', token: 'any' },
      }),
    );
    expect(html.match(/nonce="Tm9uY2VOb25jZU5vbmNlTg=="/g)).toHaveLength(2);
  });

  it('renders a newer device snapshot afresh', () => {
    const pages = new ChatPages();
    const before = pages.page('', device(1, 'Old title')).shell.withNonce('n').toString();
    const after = pages.page('', device(2, 'New title')).shell.withNonce('n').toString();
    expect(before).toContain('<title>Old title</title>');
    expect(after).toContain('<title>New title</title>');
  });
});

describe('NonceSource', () => {
  it('never hands out the same nonce twice, across pool refills', () => {
    const source = new NonceSource();
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) seen.add(source.next());
    expect(seen.size).toBe(2000);
    for (const n of seen) expect(n).toMatch(/^[A-Za-z0-9+/]{22}==$/);
  });
});
