import { createHash } from 'node:crypto';
import { isRightToLeft, pickLanguage, RETRY_IN_SCRIPT, retryInText, UI_STRINGS } from './i18n';
import {
  contrastRatio,
  escapeHtml,
  focusOn,
  lineOn,
  mutedOn,
  onColor,
  primaryUnderText,
  renderPage,
  scriptJson,
} from './render';

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

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
    const { html, csp } = renderPage({
      lang: 'en',
      textLang: 'en',
      strings: UI_STRINGS.en,
      device,
      body: { kind: 'message', code: 'link_disabled', text: '<img src=x onerror=alert(4)>' },
    });
    expect(html).not.toMatch(/<script>alert|<img src=x|javascript:/);
    expect(html).toContain('&#60;img src=x onerror=alert(4)&#62;');
    expect(html).toContain('--primary:#2f5bea');
    // A refusal page carries no script at all, and its policy allows none.
    expect(html).not.toContain('<script');
    expect(csp).toContain("script-src 'none'");
  });

  it('takes bidi controls out of operator text stored before they were refused', () => {
    // U+202E (RLO) would show "gnp.exe" as "exe.png", and an unclosed isolate would swallow what follows.
    const hostile = { ...device, styling: { title: 'Acme \u202EHelp\u2067' } };
    const chat = renderPage({
      lang: 'en',
      textLang: 'en',
      strings: UI_STRINGS.en,
      device: hostile,
      body: { kind: 'chat', maxChars: 4000, replyMs: 30_000 },
    }).html;
    const refusal = renderPage({
      lang: 'en',
      textLang: 'en',
      strings: UI_STRINGS.en,
      device: hostile,
      body: { kind: 'message', code: 'cooldown', text: 'Call 0100. \u202Egnp.exe', note: 'Soon.' },
    }).html;
    for (const html of [chat, refusal]) {
      expect(html).not.toMatch(/[\u202A-\u202E\u2066-\u2069]/);
      expect(html).toContain('<h1>Acme Help</h1>');
    }
    expect(refusal).toContain('>Call 0100. gnp.exe\nSoon.</p>');
  });

  it('ships a script that parses', () => {
    const picked = pickLanguage('en', { languages: ['en'], defaultLanguage: 'en' });
    const { html } = renderPage({
      ...picked,
      device,
      body: { kind: 'chat', maxChars: 4000, replyMs: 30_000 },
    });
    const script = html.match(/<script>([\s\S]*?)<\/script>/)?.[1] ?? '';
    expect(script.length).toBeGreaterThan(1000);
    expect(() => new Function(script)).not.toThrow();
  });

  it("allows exactly the page's own style and script, by the hash of their text", () => {
    const { html, csp } = renderPage({
      lang: 'de',
      textLang: 'de',
      strings: UI_STRINGS.de,
      device,
      body: { kind: 'chat', maxChars: 4000, replyMs: 30_000 },
    });
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.map((m) => m[1])).toEqual([' type="application/json" id="cfg"', '']);
    const styles = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)];
    expect(styles).toHaveLength(1);
    expect(csp).toContain(`script-src ${sha256(scripts[1][2])};`);
    expect(csp).toContain(`style-src ${sha256(styles[0][1])};`);
    expect(csp).toContain("default-src 'none'");
    expect(html).toContain('<html lang="de">');
    expect(html).not.toMatch(/id="log"[^>]* lang=/);
    // Operator styling is part of the hashed text: another device gets another policy.
    const other = renderPage({
      lang: 'de',
      textLang: 'de',
      strings: UI_STRINGS.de,
      device: { ...device, styling: { primaryColor: '#123456' } },
      body: { kind: 'chat', maxChars: 4000, replyMs: 30_000 },
    });
    expect(other.csp).not.toBe(csp);
  });

  it('names the language of its texts, English on the fallback, and the conversation and speech in the device language', () => {
    const picked = pickLanguage('ko', { languages: ['ko'], defaultLanguage: 'ko' });
    const { html } = renderPage({
      ...picked,
      device,
      body: { kind: 'chat', maxChars: 4000, replyMs: 30_000 },
    });
    expect(html).toContain('<html lang="en">');
    expect(html).toContain('>Send</button>');
    // Only the messages' words are in the device language (the script marks them): the log's own
    // label and the speaker names are English texts.
    expect(html).toMatch(/<div id="log" [^>]*aria-label="Chat"><\/div>/);
    const cfg = JSON.parse(
      html.match(/<script type="application\/json" id="cfg">([\s\S]*?)<\/script>/)?.[1] ?? '',
    );
    expect(cfg.lang).toBe('ko');
    const refusal = renderPage({
      ...picked,
      device,
      body: { kind: 'message', code: 'forbidden', text: 'x' },
    });
    expect(refusal.html).toContain('<html lang="en">');
  });

  it('lays out right-to-left texts right to left, and lets each message and the input take its own direction', () => {
    // An Arabic device: the page's texts fall back to English and stay left to right.
    const picked = pickLanguage('ar', { languages: ['ar'], defaultLanguage: 'ar' });
    const { html } = renderPage({
      ...picked,
      device,
      body: { kind: 'chat', maxChars: 4000, replyMs: 30_000 },
    });
    expect(html).toContain('<html lang="en">');
    // The customer's and the assistant's words may be in either direction, or both.
    expect(html).toMatch(/<textarea id="text"[^>]* dir="auto"/);
    const script = html.match(/<script>([\s\S]*?)<\/script>/)?.[1] ?? '';
    expect(script).toContain("t.className='text';t.dir='auto';");
    expect(script).toContain("n.className='notice';n.setAttribute('role','alert');n.dir='auto';");
    // Texts in a right-to-left language make the whole page right to left.
    for (const textLang of ['ar', 'he', 'fa-IR', 'ur']) {
      const rtl = renderPage({
        lang: textLang,
        textLang,
        strings: UI_STRINGS.en,
        device,
        body: { kind: 'chat', maxChars: 4000, replyMs: 30_000 },
      });
      expect(rtl.html).toContain(`<html lang="${textLang}" dir="rtl">`);
    }
    const refusal = renderPage({
      lang: 'he',
      textLang: 'he',
      strings: UI_STRINGS.en,
      device,
      body: { kind: 'message', code: 'link_disabled', text: 'הקישור הסתיים.' },
    });
    expect(refusal.html).toContain('<html lang="he" dir="rtl">');
    expect(refusal.html).toMatch(/<p class="notice" role="alert" data-code="link_disabled" dir="auto">/);
  });

  it('says, in its own language, that the chat needs JavaScript where the browser runs none', () => {
    for (const lang of ['en', 'de', 'tr']) {
      const picked = pickLanguage(lang, { languages: [lang], defaultLanguage: lang });
      const { html } = renderPage({
        ...picked,
        device,
        body: { kind: 'chat', maxChars: 4000, replyMs: 30_000 },
      });
      expect(html).toContain(
        `<noscript><p class="notice">${escapeHtml(UI_STRINGS[lang].noScript)}</p></noscript>`,
      );
    }
    expect(UI_STRINGS.de.noScript).toMatch(/JavaScript/);
    // The voice toggle, which needs the script too, shows only once the script finds speech.
    const { html } = renderPage({
      lang: 'en',
      textLang: 'en',
      strings: UI_STRINGS.en,
      device,
      body: { kind: 'chat', maxChars: 4000, replyMs: 30_000 },
    });
    expect(html).toMatch(/<button type="button" id="voice"[^>]* hidden>/);
    // The texts in the HTML itself are not sent again in the script's data.
    const cfg = JSON.parse(
      html.match(/<script type="application\/json" id="cfg">([\s\S]*?)<\/script>/)?.[1] ?? '',
    );
    expect([cfg.strings.noScript, cfg.strings.readAloud, cfg.strings.failed]).toEqual([
      undefined,
      undefined,
      UI_STRINGS.en.failed,
    ]);
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
    expect(pickLanguage('it', { languages: ['it'], defaultLanguage: 'it' }).strings.send).toBe('Invia');
    expect(pickLanguage('ja', { languages: ['ja'], defaultLanguage: 'ja' })).toEqual({
      lang: 'ja',
      textLang: 'en',
      strings: UI_STRINGS.en,
    });
    expect(pickLanguage('fr-CA', d).textLang).toBe('fr-CA');
    expect(pickLanguage('es-MX', { languages: ['es'], defaultLanguage: 'en' }).strings.send).toBe('Enviar');
  });

  it("takes the page's texts from the visitor's next accepted device language that ships, before English", () => {
    const device = { languages: ['en', 'de', 'fr', 'ja', 'ar'], defaultLanguage: 'en' };
    // The assistant speaks Arabic, the texts are French, which the visitor also reads.
    expect(pickLanguage('ar,fr;q=0.5', device)).toEqual({
      lang: 'ar',
      textLang: 'fr',
      strings: UI_STRINGS.fr,
    });
    expect(pickLanguage('ja, ar;q=0.9, de-AT;q=0.5', device)).toMatchObject({ lang: 'ja', textLang: 'de' });
    // Only languages the device offers: Spanish, accepted but not offered, is not taken.
    expect(pickLanguage('ar, es;q=0.8', device)).toMatchObject({ lang: 'ar', textLang: 'en' });
    expect(pickLanguage('ar', device)).toEqual({ lang: 'ar', textLang: 'en', strings: UI_STRINGS.en });
  });

  it('gives Norwegian and Nynorsk devices the Bokmål texts', () => {
    const norwegian = { languages: ['no', 'nn-NO'], defaultLanguage: 'no' };
    expect(pickLanguage('', norwegian).strings).toBe(UI_STRINGS.nb);
    expect(pickLanguage('nn', norwegian)).toEqual({ lang: 'nn-NO', textLang: 'nb', strings: UI_STRINGS.nb });
  });
});

describe('isRightToLeft', () => {
  it('knows right-to-left languages and scripts', () => {
    for (const tag of [
      'ar',
      'ar-EG',
      'he',
      'iw',
      'fa',
      'ur-PK',
      'yi',
      'ps',
      'ckb',
      'ug',
      'dv',
      'ku-Arab',
      'pa-Arab-PK',
      'syr',
    ]) {
      expect([tag, isRightToLeft(tag)]).toEqual([tag, true]);
    }
    for (const tag of ['en', 'de-DE', 'tr', 'ku', 'az-Latn', 'pa', 'ar-Latn', 'en-x-arab', 'zh-Hant']) {
      expect([tag, isRightToLeft(tag)]).toEqual([tag, false]);
    }
  });
});

describe('UI_STRINGS', () => {
  const keys = Object.keys(UI_STRINGS.en).sort();

  it.each(Object.keys(UI_STRINGS))('%s has a text for every key, and the time in retryIn', (lang) => {
    const strings = UI_STRINGS[lang];
    expect(Object.keys(strings).sort()).toEqual(keys);
    for (const key of keys) expect(strings[key as keyof typeof strings].trim()).not.toBe('');
    expect(strings.retryIn.match(/\{time\}/g)).toHaveLength(1);
    expect(strings.retryIn.replace(/\{time\}/, '')).not.toMatch(/[{}]/);
  });
});

describe('when to try again', () => {
  it('counts minutes up to an hour and a half, then hours up to a day and a half, then days', () => {
    const en = UI_STRINGS.en.retryIn;
    expect(retryInText(en, 1, 'en')).toBe('You can try again in 1 min.');
    expect(retryInText(en, 90 * 60, 'en')).toBe('You can try again in 90 min.');
    expect(retryInText(en, 90 * 60 + 1, 'en')).toBe('You can try again in 2 hr.');
    expect(retryInText(en, 86_400, 'en')).toBe('You can try again in 24 hr.');
    expect(retryInText(en, 36 * 3600 + 1, 'en')).toBe('You can try again in 2 days.');
    expect(retryInText(UI_STRINGS.de.retryIn, 86_400, 'de')).toBe(
      'Sie können es in 24 Std. erneut versuchen.',
    );
    // A unit written with a full stop ends the sentence with it, not with two.
    expect(retryInText(UI_STRINGS.da.retryIn, 600, 'da')).toBe('Du kan prøve igen om 10 min.');
  });

  it("is the same in the page's script, in every language", () => {
    const script = new Function(`${RETRY_IN_SCRIPT};return retryInText;`)() as typeof retryInText;
    for (const [lang, strings] of Object.entries(UI_STRINGS)) {
      for (const seconds of [1, 59, 61, 3600, 5401, 86_400, 129_601, 31_536_000]) {
        expect([lang, seconds, script(strings.retryIn, seconds, lang)]).toEqual([
          lang,
          seconds,
          retryInText(strings.retryIn, seconds, lang),
        ]);
      }
    }
  });
});

describe('text on the primary colour', () => {
  it('is white on a dark colour and near-black on a light one, for the better contrast', () => {
    expect(onColor('#7a1fa2')).toBe('#fff');
    expect(onColor('#2f5bea')).toBe('#fff');
    expect(onColor('#ffeb3b')).toBe('#1d1d1f');
    expect(onColor('#ff0')).toBe('#1d1d1f');
    expect(onColor('#a0e0ffcc')).toBe('#1d1d1f');
    // A named colour keeps white: its value is the browser's to know.
    expect(onColor('navy')).toBe('#fff');
  });

  it('keeps the quieter texts on the background readable: grey on light and dark, else black or white', () => {
    expect(mutedOn('#f5f5f7')).toBe('#55555a');
    expect(mutedOn('#101820')).toBe('#c9c9ce');
    // Mid-tone: neither grey reaches 4.5:1, nor near-black (4.26:1), but black does.
    expect(mutedOn('#808080')).toBe('#000');
    expect(mutedOn('beige')).toBe('#55555a');
    for (let v = 0; v < 256; v += 5) {
      const grey = `#${v.toString(16).padStart(2, '0').repeat(3)}`;
      for (const bg of [grey, '#e53935', '#008c95', '#2f5bea', '#ffeb3b']) {
        expect([bg, contrastRatio(mutedOn(bg), bg) >= 4.5]).toEqual([bg, true]);
      }
    }
  });

  it('darkens or lightens a mid-tone primary colour just enough for its text to reach 4.5:1', () => {
    // Material red with white text was 4.22:1, teal and mid grey with near-black 4.15 and 4.26.
    for (const primary of ['#e53935', '#008c95', '#808080']) {
      const fill = primaryUnderText(primary);
      expect(fill).not.toBe(primary);
      const ratio = contrastRatio(onColor(primary), fill);
      expect([primary, ratio >= 4.5, ratio < 4.7]).toEqual([primary, true, true]);
    }
    expect(onColor('#e53935')).toBe('#fff');
    expect(onColor('#008c95')).toBe('#1d1d1f');
    // Colours whose text already reads keep their exact value.
    for (const primary of ['#2f5bea', '#7a1fa2', '#ffeb3b', '#000', '#fff', '#a0e0ffcc', 'navy']) {
      expect(primaryUnderText(primary)).toBe(primary);
    }
    // Every colour on a coarse grid of the RGB cube.
    const steps = [0, 51, 102, 128, 153, 179, 204, 230, 255];
    for (const r of steps) {
      for (const g of steps) {
        for (const b of steps) {
          const primary = `#${[r, g, b].map((c) => c.toString(16).padStart(2, '0')).join('')}`;
          const ratio = contrastRatio(onColor(primary), primaryUnderText(primary));
          expect([primary, ratio >= 4.5]).toEqual([primary, true]);
        }
      }
    }
  });

  it('draws the input border at 3:1 or more against any background', () => {
    expect(lineOn('#f5f5f7')).toBe('#85858c');
    expect(lineOn('#ffffff')).toBe('#85858c');
    expect(lineOn('beige')).toBe('#85858c');
    for (let v = 0; v < 256; v += 5) {
      const grey = `#${v.toString(16).padStart(2, '0').repeat(3)}`;
      for (const bg of [grey, '#f5f5f7', '#faf7fc', '#101820', '#e53935', '#008c95', '#2f5bea', '#ffeb3b']) {
        expect([bg, contrastRatio(lineOn(bg), bg) >= 3]).toEqual([bg, true]);
      }
    }
    const { html } = renderPage({
      ...pickLanguage('en', { languages: ['en'], defaultLanguage: 'en' }),
      device: { ...device, styling: { backgroundColor: '#808080' } },
      body: { kind: 'chat', maxChars: 4000, replyMs: 30_000 },
    });
    expect(html).toContain(`--line:${lineOn('#808080')};`);
    expect(html).toMatch(/textarea\{[^}]*border:1px solid var\(--line\)/);
  });

  it('draws the focus ring in the primary colour unless it would not stand out from the background', () => {
    expect(focusOn('#7a1fa2', '#f5f5f7')).toBe('#7a1fa2');
    expect(focusOn('#ffeb3b', '#ffffff')).toBe('#1d1d1f');
    expect(focusOn('#202020', '#101820')).toBe('#fff');
  });

  it("is set for the page from the device's primary colour", () => {
    const { html } = renderPage({
      ...pickLanguage('en', { languages: ['en'], defaultLanguage: 'en' }),
      device: { ...device, styling: { primaryColor: '#ffeb3b' } },
      body: { kind: 'chat', maxChars: 4000, replyMs: 30_000 },
    });
    expect(html).toContain(
      ':root{--primary:#ffeb3b;--on-primary:#1d1d1f;--bg:#f5f5f7;--muted:#55555a;--line:#85858c;--focus:#1d1d1f}',
    );
    const red = renderPage({
      ...pickLanguage('en', { languages: ['en'], defaultLanguage: 'en' }),
      device: { ...device, styling: { primaryColor: '#e53935' } },
      body: { kind: 'chat', maxChars: 4000, replyMs: 30_000 },
    });
    expect(red.html).toContain(`:root{--primary:${primaryUnderText('#e53935')};--on-primary:#fff;`);
  });
});
