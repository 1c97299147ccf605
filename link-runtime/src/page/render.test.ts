import { pickLanguage, UI_STRINGS } from './i18n';
import { contentSecurityPolicy, escapeHtml, renderPage, scriptJson } from './render';

const device = {
  name: 'Acme',
  styling: {
    title: '"><script>alert(1)</script>',
    primaryColor: 'red;}</style><script>alert(2)</script>',
    logoUrl: 'javascript:alert(3)',
  },
  voice: { enabled: true },
};

describe('renderPage', () => {
  it('escapes every operator string and drops unsafe colours and logo URLs', () => {
    const html = renderPage({
      nonce: 'abc',
      lang: 'en',
      strings: UI_STRINGS.en,
      device,
      body: { kind: 'message', code: 'link_disabled', text: '<img src=x onerror=alert(4)>' },
    });
    expect(html).not.toMatch(/<script>alert|<img src=x|javascript:/);
    expect(html).toContain('&#60;img src=x onerror=alert(4)&#62;');
    expect(html).toContain('--primary:#2f5bea');
    // A refusal page carries no script at all.
    expect(html).not.toContain('<script');
  });

  it('puts only nonce-bearing scripts and styles on the chat page', () => {
    const html = renderPage({
      nonce: 'n0nce',
      lang: 'de',
      strings: UI_STRINGS.de,
      device,
      body: { kind: 'chat', token: 't' },
    });
    const scripts = [...html.matchAll(/<script([^>]*)>/g)].map((m) => m[1]);
    expect(scripts).toEqual([' type="application/json" id="cfg"', ' nonce="n0nce"']);
    expect(html).toContain('<html lang="de">');
    expect(contentSecurityPolicy('n0nce')).toContain("script-src 'nonce-n0nce'");
    expect(contentSecurityPolicy('n0nce')).toContain("default-src 'none'");
  });

  it('keeps JSON data blocks from closing their script element', () => {
    expect(scriptJson({ a: '</script><b>&' })).not.toMatch(/[<>&]/);
    expect(escapeHtml(`<>"'&\``)).toBe('&#60;&#62;&#34;&#39;&#38;&#96;');
  });
});

describe('pickLanguage', () => {
  const d = { languages: ['en', 'de', 'fr-CA'], defaultLanguage: 'de' };

  it('takes the most preferred of the device languages by q-value', () => {
    expect(pickLanguage('es;q=0.9, fr;q=0.8, en;q=0.5', d).lang).toBe('fr-CA');
    expect(pickLanguage('fr;q=0.8, en;q=0.9', d).lang).toBe('en');
    expect(pickLanguage('fr-CA', d).strings.send).toBe('Envoyer');
  });

  it('falls back to the device default, and to English strings for a language not shipped', () => {
    expect(pickLanguage('ja, zh;q=0.5', d).lang).toBe('de');
    expect(pickLanguage('', d).strings.send).toBe('Senden');
    expect(pickLanguage('it', { languages: ['it'], defaultLanguage: 'it' }).strings.send).toBe('Send');
    expect(pickLanguage('es-MX', { languages: ['es'], defaultLanguage: 'en' }).strings.send).toBe('Enviar');
  });
});
