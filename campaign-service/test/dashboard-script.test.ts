import type { Browser } from 'playwright-core';
import { onColor, primaryUnderText } from '../../link-runtime/src/page/render';
import { describeWithChromium, launchChromium } from '../../test/support/chromium';
import { APP_JS } from '../src/dashboard/assets.script';

describeWithChromium('campaign-service/test/dashboard-script.test.ts')(
  'the dashboard script in a real browser',
  () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await launchChromium();
    }, 60_000);
    afterAll(() => browser?.close());

    it("moves a new campaign's default times to the browser's zone with the zone itself, keeping their instants", async () => {
      const context = await browser.newContext({ timezoneId: 'Asia/Tokyo' });
      const page = await context.newPage();
      await page.setContent(`<form>
        <input id="start" type="datetime-local" value="2026-05-10T14:00" data-instant="2026-05-10T14:00:00.000Z">
        <input id="end" type="datetime-local" value="2026-05-18T14:00" data-instant="2026-05-18T14:00:00.000Z">
        <select id="zone" data-tz-auto="1"><option>UTC</option><option>Asia/Tokyo</option></select>
      </form>`);
      await page.addScriptTag({ content: APP_JS });
      expect(await page.inputValue('#zone')).toBe('Asia/Tokyo');
      expect(await page.inputValue('#start')).toBe('2026-05-10T23:00');
      expect(await page.inputValue('#end')).toBe('2026-05-18T23:00');
      await context.close();
    });

    it('previews the text colour the link page puts on the primary colour, and the shade it puts under it', async () => {
      const page = await browser.newPage();
      await page.setContent(`<input id="primary" data-preview="primaryColor" value="#2f5bea">
        <div id="link-preview"><div class="pv-head"></div>
        <div class="pv-body"><p class="pv-bubble pv-user">x</p></div></div>`);
      await page.addScriptTag({ content: APP_JS });
      const rgb = (hex: string) =>
        `rgb(${[1, 3, 5].map((i) => Number.parseInt(hex.length === 4 ? hex[1 + (i - 1) / 2].repeat(2) : hex.slice(i, i + 2), 16)).join(', ')})`;
      const colours = ['#2f5bea', '#ffeb3b', '#7a1fa2', '#a0e0ff', '#808080', '#000000', '#ffffff'];
      // Mid-tones whose text the link page reaches 4.5:1 on only in a darker or lighter shade.
      colours.push('#e53935', '#008c95', '#767676', '#9e9e9e');
      for (const colour of colours) {
        await page.fill('#primary', colour);
        await page.dispatchEvent('#primary', 'input');
        const shown = await page.evaluate(() =>
          [...document.querySelectorAll('.pv-head, .pv-user')].flatMap((e) => [
            getComputedStyle(e).color,
            getComputedStyle(e).backgroundColor,
          ]),
        );
        const text = rgb(onColor(colour));
        const fill = rgb(primaryUnderText(colour));
        expect([colour, shown]).toEqual([colour, [text, fill, text, fill]]);
      }
      await page.close();
    });

    it("previews the link page's own title where the device sets none, not the device's name", async () => {
      const page = await browser.newPage();
      await page.setContent(`<input id="name" name="name" data-preview="name" value="Paris desk">
        <input id="title" data-preview="title" value="">
        <div id="link-preview" data-default-title="Discussion"><div class="pv-head">Discussion</div>
        <div class="pv-body"><p class="pv-bubble pv-user">x</p></div></div>`);
      await page.addScriptTag({ content: APP_JS });
      expect(await page.textContent('.pv-head')).toBe('Discussion');
      await page.fill('#title', 'Concierge');
      expect(await page.textContent('.pv-head')).toBe('Concierge');
      await page.fill('#title', '  ');
      expect(await page.textContent('.pv-head')).toBe('Discussion');
      await page.close();
    });

    it('keeps each campaign timing live by its phase, a halt before the start counting as the end', async () => {
      const at = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();
      const day = 86_400_000;
      const timings = {
        upcoming: { launched: at(-day), start: at(2 * day + 60_000), end: at(9 * day) },
        running: { launched: at(-day), start: at(-3 * 3_600_000 - 60_000), end: at(day) },
        // Launched two hours after its start: running since the launch.
        launchedLate: { launched: at(-3_600_000 - 60_000), start: at(-3 * 3_600_000), end: at(day) },
        ended: { launched: at(-10 * day), start: at(-9 * day), end: at(-day - 60_000) },
        haltedWhileUpcoming: { launched: at(-day), start: at(2 * day), end: at(-5 * 60_000 - 5_000) },
        draft: { launched: '', start: at(day), end: at(2 * day) },
      };
      const page = await browser.newPage();
      await page.setContent(
        Object.entries(timings)
          .map(
            ([id, t]) =>
              `<span id="${id}" data-timing data-launched="${t.launched}" data-start="${t.start}" data-end="${t.end}">server</span>`,
          )
          .join(''),
      );
      await page.addScriptTag({ content: APP_JS });
      const text = (id: string) => page.locator(`#${id}`).textContent();
      expect(await text('upcoming')).toBe('Starts in 2d 0h');
      expect(await text('running')).toBe('Running for 3h 1m');
      expect(await text('launchedLate')).toBe('Running for 1h 1m');
      expect(await text('ended')).toBe('Ended 1d 0h ago');
      expect(await text('haltedWhileUpcoming')).toMatch(/^Ended 5m \d+s ago$/);
      expect(await text('draft')).toBe('Not launched');
      await page.close();
    });

    it('sends a posted form once: a second click while it is on its way is ignored, the button name kept', async () => {
      const page = await browser.newPage();
      const posts: string[] = [];
      await page.route('http://dash.test/**', async (route) => {
        const req = route.request();
        if (req.url().endsWith('/app.js'))
          return route.fulfill({ contentType: 'application/javascript', body: APP_JS });
        if (req.method() === 'POST') {
          posts.push(`${new URL(req.url()).pathname} ${req.postData() ?? ''}`);
          await new Promise((r) => setTimeout(r, 1_000)); // a slow server
          return route.fulfill({ contentType: 'text/html', body: '<h1>Done</h1>' });
        }
        return route.fulfill({
          contentType: 'text/html',
          body: `<form method="post" action="/add" id="add"><input name="n" value="50"><button type="submit" name="go" value="yes">Add</button></form>
            <form method="post" action="/revoke" id="revoke" data-confirm="Sure?"><button type="submit">Revoke</button></form>
            <script src="/app.js"></script>`,
        });
      });
      // Clicks the form's button, and again 250 ms later; what the button and form showed between.
      // In the page: while a form's navigation is on its way, Playwright's own calls wait for it.
      const clickTwice = (form: string) =>
        page.evaluate(
          (id) =>
            new Promise<(string | null)[]>((resolve) => {
              const f = document.getElementById(id)!;
              const b = f.querySelector('button')!;
              b.click();
              const seen = [f.getAttribute('aria-busy'), b.getAttribute('aria-disabled'), String(b.disabled)];
              setTimeout(() => {
                b.click();
                resolve(seen);
              }, 250);
            }),
          form,
        );
      const settled = async () => {
        await page.waitForSelector('h1');
        await page.waitForTimeout(300); // a second submission, if any, would be on its way by now
      };

      // Two clicks 250 ms apart on a slow server: one submission, with the button's name and value.
      await page.goto('http://dash.test/');
      const addSeen = await clickTwice('add');
      await settled();
      expect(posts).toEqual(['/add n=50&go=yes']);
      expect(addSeen).toEqual(['true', 'true', 'false']);

      // A confirmation declined leaves the form as it was; accepted, it is asked once and sent once.
      posts.length = 0;
      await page.goto('http://dash.test/');
      const answers = [false, true];
      const asked: string[] = [];
      page.on('dialog', (d) => {
        asked.push(d.message());
        void (answers.shift() ? d.accept() : d.dismiss());
      });
      await page.evaluate(() => document.querySelector<HTMLButtonElement>('#revoke button')!.click());
      expect(await page.locator('#revoke').getAttribute('aria-busy')).toBeNull();
      expect(await page.locator('#revoke button').getAttribute('aria-disabled')).toBeNull();
      const revokeSeen = await clickTwice('revoke');
      await settled();
      expect(asked).toEqual(['Sure?', 'Sure?']);
      expect(posts).toEqual(['/revoke ']);
      expect(revokeSeen).toEqual(['true', 'true', 'false']);

      // A page shown again from the back/forward cache can be sent again.
      await page.goto('http://dash.test/');
      const shown = await page.evaluate(() => {
        // After the script's own listener: the form is marked, and the page stays.
        document.addEventListener('submit', (e) => e.preventDefault());
        const f = document.querySelector('#add') as HTMLFormElement;
        f.requestSubmit();
        const busy = f.getAttribute('aria-busy');
        window.dispatchEvent(new PageTransitionEvent('pageshow', { persisted: true }));
        return busy;
      });
      expect(shown).toBe('true');
      expect(await page.locator('#add').getAttribute('aria-busy')).toBeNull();
      expect(await page.locator('#add button').getAttribute('aria-disabled')).toBeNull();
      await page.close();
    });

    it('moves the state badge on with the timing, and says to reload once the page shows another phase', async () => {
      const at = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();
      const day = 86_400_000;
      const campaign = (id: string, state: string, t: { start: string; end: string }, halted = false) =>
        `<section id="${id}"><p><span class="badge state-${state}">${state}</span>${halted ? ' <span class="badge state-halted">halted</span>' : ''}
          <span data-timing data-state="${state}" data-launched="${at(-day)}" data-start="${t.start}" data-end="${t.end}">server</span></p></section>`;
      const page = await browser.newPage();
      await page.setContent(
        [
          campaign('starting', 'upcoming', { start: at(1_000), end: at(day) }),
          campaign('ending', 'active', { start: at(-day), end: at(1_000) }),
          campaign('steady', 'active', { start: at(-day), end: at(day) }),
          campaign('halted', 'completed', { start: at(-day), end: at(-60_000) }, true),
          '<section id="draft"><p><span class="badge state-draft">draft</span> <span data-timing data-state="draft" data-launched="" data-start="" data-end="">server</span></p></section>',
        ].join(''),
      );
      await page.addScriptTag({ content: APP_JS });
      const badges = (id: string) =>
        page
          .locator(`#${id} .badge`)
          .evaluateAll((els) => els.map((e) => `${e.className}: ${e.textContent}`));
      const note = (id: string) => page.locator(`#${id} [role="status"]`).textContent();
      await page.waitForFunction(() =>
        document.querySelector('#ending [data-timing]')?.textContent?.startsWith('Ended'),
      );
      await page.waitForFunction(() =>
        document.querySelector('#starting [data-timing]')?.textContent?.startsWith('Running'),
      );
      expect(await badges('starting')).toEqual(['badge state-active: active']);
      expect(await note('starting')).toBe('The campaign is now active: reload to see what you can do.');
      expect(await badges('ending')).toEqual(['badge state-completed: completed']);
      expect(await note('ending')).toBe('The campaign is now completed: reload to see what you can do.');
      // As rendered: the badge stays, nothing to reload for; a halted tag and a draft are left alone.
      expect(await badges('steady')).toEqual(['badge state-active: active']);
      expect(await page.locator('#steady [role="status"]').textContent()).toBe('');
      expect(await badges('halted')).toEqual([
        'badge state-completed: completed',
        'badge state-halted: halted',
      ]);
      expect(await page.locator('#halted [role="status"]').textContent()).toBe('');
      expect(await badges('draft')).toEqual(['badge state-draft: draft']);
      await page.close();
    });
  },
);
