import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { DeviceSnapshot } from '@outreach/contracts';
import { ChatPages } from './chat-pages';
import { UI_STRINGS } from './i18n';
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
  it('tells of each device snapshot once, on the first page asked for it', () => {
    const told: number[] = [];
    const pages = new ChatPages({ maxChars: 4000, replyMs: 30_000 }, (d) => told.push(d.version));
    const first = device(1, 'Acme');
    pages.page('en', first);
    pages.page('de', first);
    pages.page('en', undefined);
    pages.page('en', device(2, 'Acme'));
    expect(told).toEqual([1, 2]);
  });

  it('sends exactly the rendered page, plain, gzip or brotli', () => {
    const d = device(1, '<b>Acme</b>');
    const page = new ChatPages({ maxChars: 4000, replyMs: 30_000 }).page('de-CH, en;q=0.5', d);
    expect(page.lang).toBe('de');
    const rendered = renderPage({
      lang: 'de',
      textLang: 'de',
      strings: UI_STRINGS.de,
      device: d,
      body: { kind: 'chat', maxChars: 4000, replyMs: 30_000 },
    });
    const plain = page.encoded.bytes('identity');
    expect(plain.encoding).toBeUndefined();
    expect(plain.body.toString('utf8')).toBe(rendered.html);
    const gzip = page.encoded.bytes('gzip');
    expect(gzip.encoding).toBe('gzip');
    expect(gunzipSync(gzip.body).toString('utf8')).toBe(rendered.html);
    const br = page.encoded.bytes('br');
    expect(br.encoding).toBe('br');
    expect(brotliDecompressSync(br.body).toString('utf8')).toBe(rendered.html);
    // What a phone downloads: well under half the page.
    expect(br.body.length).toBeLessThan(plain.body.length / 2);
    expect(page.encoded.bytes(false).body).toBe(plain.body);
    expect(page.encoded.csp).toBe(rendered.csp);
  });

  it("keeps apart one device language's pages whose texts fell back to different languages", () => {
    const pages = new ChatPages({ maxChars: 4000, replyMs: 30_000 });
    const multi = { ...device(1, 'Acme'), languages: ['en', 'de', 'fr', 'ja', 'ar'] };
    const htmlLang = (acceptLanguage: string) =>
      /<html lang="([^"]+)"/.exec(
        pages.page(acceptLanguage, multi).encoded.bytes('identity').body.toString(),
      )?.[1];
    // Arabic has no texts of its own: French for a visitor who also reads it, else English.
    expect(htmlLang('ar,fr;q=0.5')).toBe('fr');
    expect(htmlLang('ar')).toBe('en');
    expect(htmlLang('ar,de;q=0.5')).toBe('de');
  });

  it('renders a newer device snapshot afresh', () => {
    const pages = new ChatPages({ maxChars: 4000, replyMs: 30_000 });
    const html = (version: number, title: string) =>
      pages.page('', device(version, title)).encoded.bytes('identity').body.toString();
    expect(html(1, 'Old title')).toContain('<title>Old title</title>');
    expect(html(2, 'New title')).toContain('<title>New title</title>');
  });
});
