import { mkdirSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import path from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { APP_CSS } from '../../campaign-service/src/dashboard/assets.styles';
import { createOperatorFromEnv } from '../../campaign-service/src/dashboard/create-operator';
import { barChart } from '../../campaign-service/src/dashboard/usage-chart';
import { expectAccessible } from '../support/accessibility';
import { describeWithChromium, launchChromium } from '../support/chromium';
import { admin } from '../support/fixtures';
import { startSystem, type TestSystem } from '../support/system';

jest.setTimeout(240_000);

const ARTIFACTS = path.resolve(__dirname, '../artifacts');
const EMAIL = 'operator@example.com';
const PASSWORD = 'a-long-operator-password';
const TZ = 'Europe/Paris';

/** The `datetime-local` text of an instant as seen in `tz`. */
function localInput(at: Date, tz: string): string {
  const p = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
    })
      .formatToParts(at)
      .map((x) => [x.type, x.value]),
  );
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}`;
}

/** Waits until the element's trimmed text equals `text`. */
async function hasText(locator: Locator, text: string, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < until) {
    last = ((await locator.textContent()) ?? '').trim();
    if (last === text) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`expected text "${text}", found "${last}"`);
}

/**
 * expectAccessible, and then no violation at all of the axe `rules` named, whatever their impact:
 * axe rates some faults that mislead a screen reader's user (a skipped heading level, two regions
 * of one name) as moderate, below what expectAccessible fails on.
 */
async function expectAccessibleWith(page: Page, name: string, rules: string[]): Promise<void> {
  await expectAccessible(page, name); // which also puts axe in the page
  const result = (await page.evaluate(
    `axe.run(document, { runOnly: { type: 'rule', values: ${JSON.stringify(rules)} }, resultTypes: ['violations'] })`,
  )) as { violations: Array<{ id: string; nodes: Array<{ target: string[] }> }> };
  expect(
    result.violations.map((v) => `${name}: ${v.id} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
  ).toEqual([]);
}

/**
 * The usage chart's text as drawn, those hidden left out, and the chart's box: on a phone the
 * chart is drawn at about half size, text and all.
 */
async function chartText(page: Page) {
  return page.evaluate(() => {
    const svg = document.querySelector('svg.chart')!.getBoundingClientRect();
    const texts = Array.from(document.querySelectorAll('svg.chart > text'))
      .filter((t) => getComputedStyle(t).display !== 'none')
      .map((t) => {
        const r = t.getBoundingClientRect();
        return { text: t.textContent ?? '', left: r.left, right: r.right, top: r.top, height: r.height };
      });
    return { svg: { left: svg.left, right: svg.right }, texts };
  });
}

/** Saves a full-page screenshot and checks nothing makes the page scroll sideways on a phone. */
async function shot(page: Page, name: string): Promise<void> {
  const wide = await page.evaluate((width) => {
    if (document.documentElement.scrollWidth <= width) return [];
    return Array.from(document.querySelectorAll('body *'))
      .filter((el) => el.getBoundingClientRect().right > width + 1 && !el.closest('.table-wrap, .sections'))
      .slice(0, 5)
      .map(
        (el) =>
          `${el.tagName.toLowerCase()}.${el.className} right=${Math.round(el.getBoundingClientRect().right)}`,
      );
  }, page.viewportSize()!.width);
  expect([name, wide]).toEqual([name, []]);
  await page.screenshot({
    path: path.join(ARTIFACTS, `dashboard-${name}.png`),
    fullPage: true,
    animations: 'disabled',
  });
}

/** Signs `page` in as the test's operator, landing on the project's campaigns. */
async function signIn(page: Page): Promise<void> {
  await page.goto('/dashboard/sign-in');
  await page.getByLabel('E-mail address').fill(EMAIL);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL('**/dashboard/p/*/campaigns');
}

/**
 * A slow server: a TCP proxy to `port` that holds every byte of the answers for `delayMs`, so
 * that a second click lands while the first form's answer is still on its way.
 */
async function slowProxy(
  port: number,
  delayMs: number,
): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    client.pipe(upstream);
    upstream.on('data', (chunk) => setTimeout(() => client.writable && client.write(chunk), delayMs));
    upstream.on('end', () => setTimeout(() => client.end(), delayMs));
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ]) {
      a.on('error', () => b.destroy());
      a.on('close', () => setTimeout(() => b.destroy(), delayMs));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describeWithChromium('test/browser/dashboard.test.ts')(
  'operator dashboard in a browser (phone viewport)',
  () => {
    let sys: TestSystem;
    let browser: Browser;
    let page: Page;
    let projectId: string;
    const cspViolations: string[] = [];

    beforeAll(async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      sys = await startSystem();
      const project = await admin(sys, 'POST', '/projects', { name: 'Acme outreach' });
      projectId = project.id;
      await createOperatorFromEnv(sys.ns.env, { email: EMAIL, password: PASSWORD, projectIds: [projectId] });
      browser = await launchChromium();
      const context = await browser.newContext({
        viewport: { width: 375, height: 812 },
        deviceScaleFactor: 1,
        isMobile: true,
        hasTouch: true,
        timezoneId: TZ,
        baseURL: sys.adminUrl,
        permissions: ['clipboard-read', 'clipboard-write'],
      });
      page = await context.newPage();
      page.setDefaultTimeout(10_000);
      page.on('console', (m) => {
        if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
      });
    });

    afterAll(async () => {
      await browser?.close();
      await sys?.stop();
    });

    it('walks the main journeys of an operator', async () => {
      // ---- sign in
      await page.goto('/');
      await hasText(page.locator('h1'), 'Sign in');
      await expectAccessible(page, 'sign-in');
      await shot(page, '01-sign-in');
      await page.getByLabel('E-mail address').fill(EMAIL);
      await page.getByLabel('Password').fill('wrong password');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText('is not correct').waitFor();
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`**/dashboard/p/${projectId}/campaigns`);
      await expectAccessible(page, 'campaigns (empty)');

      // ---- a device with styling (live preview), knowledge and an allow-list
      await page.getByRole('link', { name: 'Devices' }).click();
      await page.getByRole('link', { name: 'New device' }).click();
      await page.getByLabel(/^Name\b/).fill('Support chat');
      await page.getByLabel('Page title').fill('Acme help');
      await hasText(page.locator('#link-preview .pv-head'), 'Acme help');
      // The preview shows the page's colours on example messages, not a greeting the page lacks.
      await page.getByLabel('Primary colour').fill('#7a1fa2');
      const userBubble = page.locator('#link-preview .pv-user');
      expect(await userBubble.evaluate((e) => getComputedStyle(e).backgroundColor)).toBe('rgb(122, 31, 162)');
      expect(await page.locator('#link-preview .pv-body').textContent()).toBe(
        "A customer's messageThe assistant's reply",
      );
      await page.getByLabel('Persona').fill('You are the friendly assistant of Acme Bikes.');
      await page.getByLabel('Custom instructions').fill('Keep answers short.');
      await page.getByLabel('Entry 1 title').fill('Opening hours');
      await page.getByLabel('Entry 1 content').fill('We are open 9 to 5 on weekdays.');
      await page.getByLabel('IP allow-list').fill('not-a-network');
      await expectAccessibleWith(page, 'device form', ['heading-order', 'landmark-unique']);
      await page.getByRole('button', { name: 'Create device' }).click();
      await page.locator('#f-ipAllowList-err', { hasText: 'not-a-network' }).waitFor();
      await page.getByLabel('IP allow-list').fill('0.0.0.0/0\n::/0');
      await page.getByRole('button', { name: 'Create device' }).click();
      await page.getByText('Device saved').waitFor();
      await shot(page, '02-device');

      // ---- a metered campaign, its schedule typed in the browser's time zone
      await page.getByRole('link', { name: 'Campaigns' }).click();
      await page.getByRole('link', { name: 'New campaign' }).click();
      expect(await page.getByLabel('Time zone of these times').inputValue()).toBe(TZ);
      const start = new Date(Date.now() - 60_000);
      const end = new Date(Date.now() + 2 * 3600_000);
      await page.getByLabel(/^Name\b/).fill('Spring check-in');
      await page.getByLabel('Starts').fill(localInput(start, TZ));
      await page.getByLabel('Ends').fill(localInput(end, TZ));
      await page.getByLabel(/^Metered/).check();
      await page.getByLabel('Price per conversation (metered)').fill('0.50');
      await page.getByLabel('Recipient cap').fill('1000');
      await expectAccessible(page, 'campaign form');
      await shot(page, '03-campaign-form');
      await page.getByRole('button', { name: 'Create campaign' }).click();
      await page.getByText('Campaign created as a draft.').waitFor();
      const campaignUrl = page.url().replace(/\?.*$/, '');
      const campaignId = campaignUrl.split('/').pop()!;
      const stored = await admin(sys, 'GET', `/projects/${projectId}/campaigns/${campaignId}`);
      expect(stored.startDate).toBe(new Date(Math.floor(start.getTime() / 60_000) * 60_000).toISOString());
      expect(stored.pricePerConversation).toBe(50);
      expect(stored.state).toBe('draft');

      // ---- top it off, after a refusal shown where the operator looks, the value kept (the
      // browser itself refuses less than 1: the input's min)
      await page.getByLabel('Add conversations').fill('999999999999');
      await page.getByRole('button', { name: 'Add top-off' }).click();
      await page.locator('#error-summary').waitFor();
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('error-summary');
      expect(await page.getByLabel('Add conversations').inputValue()).toBe('999999999999');
      const tooMany = 'Enter 100000000 or less.';
      expect(await page.locator('.notice, .error').filter({ hasText: tooMany }).count()).toBe(2);
      expect(await page.locator('#f-conversations-err').textContent()).toBe(tooMany);
      await page.locator('#error-summary a').click();
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('f-conversations');
      // A price of the top-off's own, prefilled with the campaign's, refused in words when not one.
      await page.getByLabel('Add conversations').fill('3');
      expect(await page.getByLabel('Price per conversation').inputValue()).toBe('0.50');
      await page.getByLabel('Price per conversation').fill('half');
      await page.getByRole('button', { name: 'Add top-off' }).click();
      await hasText(page.locator('#f-price-err'), 'Enter an amount such as 12 or 0.25.');
      expect(await page.getByLabel('Price per conversation').getAttribute('aria-invalid')).toBe('true');
      await expectAccessibleWith(page, 'campaign page, top-off price refused', [
        'heading-order',
        'landmark-unique',
      ]);
      await shot(page, '04b-top-off-price-refused');
      await page.getByLabel('Price per conversation').fill('0.50');
      await page.getByRole('button', { name: 'Add top-off' }).click();
      await page.getByText('Top-off added').waitFor();
      await hasText(page.locator('#allowance-text'), '0 of 3 conversations used, 3 left');
      await expectAccessibleWith(page, 'campaign page', ['heading-order', 'landmark-unique']);

      // ---- an API key, shown once
      await page.getByRole('link', { name: 'API Keys' }).click();
      await page.getByLabel(/^Name\b/).fill('CRM sync');
      await page.getByLabel('Rate limit (requests a minute)').fill('120');
      await page.getByRole('button', { name: 'Create key' }).click();
      const key = (await page.locator('#new-key').textContent())!.trim();
      expect(key).toMatch(/^ork_[0-9A-Za-z]{40}$/);
      await page.getByRole('button', { name: 'Copy' }).waitFor();
      await page.getByRole('button', { name: 'Copy' }).click();
      await page.getByText('Copied to the clipboard.').waitFor();
      await expectAccessible(page, 'api keys');
      await shot(page, '04-api-key');
      const list = await fetch(`${sys.gatewayUrl}/api/v1/projects/${projectId}/campaigns`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(list.status).toBe(200);
      await page.reload();
      expect(await page.locator('#new-key').count()).toBe(0); // never shown again
      await page.getByText(`${key.slice(0, 10)}…`).waitFor();
      // Revoke is in sight on a phone, without scrolling the keys table sideways.
      const revokeRights = await page
        .getByRole('button', { name: /^Revoke/ })
        .evaluateAll((buttons) => buttons.map((b) => b.getBoundingClientRect().right));
      expect(revokeRights.length).toBeGreaterThan(0);
      for (const right of revokeRights) expect(right).toBeLessThanOrEqual(page.viewportSize()!.width);

      // ---- import a CSV of recipients and watch the progress
      const rows = ['email,name,city,instructions,maxTotalInteractions'];
      for (let i = 0; i < 430; i += 1)
        rows.push(`user${i}@example.com,User ${i},Lyon,Greet {name} from {meta.city}.,5`);
      // A blank line, and a cell over two lines: the report names the lines of the file all the same.
      rows.splice(11, 0, '');
      rows[21] = 'user19@example.com,User 19,Lyon,"Greet {name}\r\nfrom {meta.city}.",5';
      rows.push('ada@example.com,"Lovelace, Ada",London,"Greet {name} warmly; mention {meta.city}.",5');
      rows.push('user1@example.com,Duplicate,Lyon,,5');
      rows.push('bad@example.com,Bad limit,Paris,,lots');
      const csvPath = path.join(ARTIFACTS, 'recipients.csv');
      writeFileSync(csvPath, `${rows.join('\r\n')}\r\n`);
      await page.goto(`${campaignUrl}/recipients/import`);
      await page.getByLabel('CSV file').setInputFiles(csvPath);
      await page.getByText('433 rows ready to import.').waitFor();
      expect(await page.getByLabel('Column "email"').inputValue()).toBe('externalId');
      expect(await page.getByLabel('Column "name"').inputValue()).toBe('label');
      expect(await page.getByLabel('Column "city"').inputValue()).toBe('metadata');
      expect(await page.getByLabel('Column "instructions"').inputValue()).toBe('injectionInstructions');
      await expectAccessible(page, 'import');
      await page.getByRole('button', { name: 'Import rows' }).click();
      await page.getByText('Import finished: 433 rows processed.').waitFor({ timeout: 60_000 });
      expect(
        await page.locator('#import-progress').evaluate((p: HTMLProgressElement) => [p.value, p.max]),
      ).toEqual([433, 433]);
      await page.getByText('431 created, 1 duplicate, 1 failed.').waitFor();
      expect(await page.locator('#import-report tbody tr').count()).toBe(433);
      const dup = page.locator('#import-report tbody tr', { hasText: 'duplicate' });
      expect(await dup.locator('td').first().textContent()).toBe('435');
      const failed = page.locator('#import-report tbody tr', { hasText: 'bad@example.com' });
      expect(await failed.textContent()).toContain('error');
      expect(await failed.locator('td').first().textContent()).toBe('436');
      // The row's problem in words, under the name of the field it was mapped to, never a pointer.
      expect(await failed.locator('td').last().textContent()).toBe(
        'maxTotalInteractions: Enter a whole number from 1 to 1,000,000,000, or leave it empty for no limit.',
      );
      await shot(page, '05-import');
      // Once it ends, the import can run again without a reload, from the same file chosen again.
      expect(await page.getByRole('button', { name: 'Import rows' }).isEnabled()).toBe(true);
      expect(await page.getByLabel('CSV file').inputValue()).toBe('');
      await page.getByLabel('CSV file').setInputFiles(csvPath);
      await page.getByText('433 rows ready to import.').waitFor();

      // ---- recipients: search, the active filter, preview of the exact prompt
      await page.goto(`${campaignUrl}/recipients`);
      await expectAccessible(page, 'recipients');
      await page.getByLabel('Search label or external id').fill('lovelace');
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.getByText(/\b1 matching recipient\b/).waitFor();
      await page.getByRole('link', { name: 'Lovelace, Ada' }).click();
      const link = (await page.locator('#recipient-link').textContent())!.trim();
      expect(link.startsWith(`${sys.linkUrl}/i/`)).toBe(true);
      const recipientUrl = page.url();
      await page.getByRole('link', { name: 'Preview the system prompt' }).click();
      const prompt = (await page.locator('#system-prompt').textContent())!;
      expect(prompt).toContain('You are the friendly assistant of Acme Bikes.');
      expect(prompt).toContain('Opening hours');
      expect(prompt).toContain('Keep answers short.\n\nGreet Lovelace, Ada warmly; mention London.');
      await expectAccessible(page, 'prompt preview');
      await shot(page, '06-prompt');

      // ---- edit it while the campaign is a draft: the link stays the same
      await page.goto(recipientUrl);
      await page.getByRole('link', { name: 'Edit', exact: true }).click();
      await page.getByLabel('Message when the window is full').fill('One moment, please.');
      await expectAccessible(page, 'recipient edit form');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByText('Changes saved.').waitFor();
      expect((await page.locator('#recipient-link').textContent())!.trim()).toBe(link);

      // ---- launch, with a confirmation that says what happens
      await page.goto(campaignUrl);
      await page.getByRole('link', { name: 'Launch…' }).click();
      await page.getByText('active at once').waitFor();
      await expectAccessible(page, 'launch confirmation');
      await page.getByRole('button', { name: 'Launch campaign' }).click();
      await page.getByText('Campaign launched.').waitFor();
      await hasText(page.locator('.badge').first(), 'active');
      await page.locator('[data-timing]', { hasText: 'Running for' }).first().waitFor();
      // Launched after its start (a minute before it was created): running since the launch.
      expect(await page.locator('[data-timing]').first().textContent()).toMatch(/^Running for \d+s$/);

      // ---- an active campaign's recipients can no longer be edited: the button says so, while
      // the operator can still close the link or delete the recipient
      await page.goto(recipientUrl);
      const edit = page.getByRole('button', { name: 'Edit' });
      expect(await edit.isDisabled()).toBe(true);
      expect(await edit.getAttribute('aria-describedby')).toBe('recipient-actions-why');
      for (const name of ['Disable', 'Delete'])
        expect(await page.getByRole('button', { name }).isEnabled()).toBe(true);
      await page.locator('#recipient-actions-why', { hasText: 'while the campaign is active' }).waitFor();
      await expectAccessible(page, 'recipient of an active campaign');
      await page.goto(campaignUrl);

      // ---- a customer opens the link in a second page and starts a conversation
      const customer = await page.context().newPage();
      await customer.goto(link);
      await customer.locator('#text:not([disabled])').waitFor({ timeout: 20_000 });
      await customer.locator('#text').fill('When are you open?');
      await customer.locator('#send').click();
      await customer.locator('.msg.assistant').first().waitFor();
      await customer.waitForFunction(() => {
        const m = document.querySelector('.msg.assistant');
        return (
          m &&
          m.getAttribute('aria-busy') === null &&
          (m.querySelector('.text')?.textContent ?? '').length > 0
        );
      });
      await customer.screenshot({
        path: path.join(ARTIFACTS, 'dashboard-07-link-page.png'),
        animations: 'disabled',
      });
      await customer.close();

      // ---- the allowance moves (usage arrives through the event stream)
      const until = Date.now() + 20_000;
      let allowance = '';
      while (Date.now() < until) {
        await page.reload();
        allowance = (await page.locator('#allowance-text').textContent()) ?? '';
        if (allowance.startsWith('1 of 3')) break;
        await page.waitForTimeout(300);
      }
      expect(allowance).toBe('1 of 3 conversations used, 2 left');
      // The chart's text can be read on a phone: its figures and its one hour's label.
      const drawn = await chartText(page);
      expect(drawn.texts.map((t) => t.text)).toEqual([
        '1',
        '0',
        expect.stringMatching(/^\d\d-\d\d \d\d:00$/),
      ]);
      for (const t of drawn.texts) expect([t.text, t.height >= 10]).toEqual([t.text, true]);
      await shot(page, '08-campaign-active');

      // ---- halt
      await page.getByRole('link', { name: 'Halt…' }).click();
      await page.getByText('ends now').waitFor();
      await page.getByRole('button', { name: 'Halt campaign' }).click();
      await page.getByText('Campaign halted.').waitFor();
      await hasText(page.locator('.badge').first(), 'completed');
      await page
        .locator('[data-timing]', { hasText: /Ended .* ago/ })
        .first()
        .waitFor();
      // Top-offs, the chart's figures and recipients: three tables that scroll sideways.
      expect(await page.locator('.table-wrap[role="region"]').count()).toBe(3);
      await expectAccessibleWith(page, 'campaign completed', ['heading-order', 'landmark-unique']);

      // ---- read the statement
      await page.getByRole('link', { name: 'Statement' }).click();
      const line = page.locator('tbody tr', { hasText: 'Top-off' });
      expect(await line.locator('td').allTextContents()).toEqual([
        expect.stringContaining('Top-off'),
        '1',
        '0.50',
        '0.50',
      ]);
      await expectAccessible(page, 'statement');
      await shot(page, '09-statement');
      const csv = await page.evaluate(
        async (href) => (await fetch(href)).text(),
        `${new URL(page.url()).pathname.replace(/statement$/, 'statement.csv')}${new URL(page.url()).search}`,
      );
      expect(csv.split('\r\n')[0]).toBe(
        'month,campaign_id,campaign_name,budget_mode,line,top_off_id,conversations,unit_price_minor,amount_minor',
      );
      expect(csv).toContain(`${campaignId},Spring check-in,metered,top_off,`);
      await page.getByRole('link', { name: 'Billing' }).click();
      expect(await page.locator('#project-total').textContent()).toBe('0.50');
      await expectAccessible(page, 'project statement');

      // ---- the account page, linked from the header: a refused change says why under its field
      await page.getByRole('link', { name: 'Account' }).click();
      await page.waitForURL('**/dashboard/account');
      await expectAccessible(page, 'account');
      await page.locator('#f-currentPassword').fill(PASSWORD);
      await page.locator('#f-newPassword').fill('a-new-password-1');
      await page.locator('#f-confirmPassword').fill('a-new-password-2');
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.locator('#f-confirmPassword-err').waitFor();
      expect(await page.locator('#f-confirmPassword').getAttribute('aria-invalid')).toBe('true');
      await expectAccessible(page, 'account, refused');
      await shot(page, '09b-account');

      // ---- the project's activity: who did what on this journey, newest first
      await page.goto(campaignUrl);
      await page
        .getByRole('navigation', { name: 'Project sections' })
        .getByRole('link', { name: 'Activity' })
        .click();
      await page.waitForURL('**/activity');
      const activity = page.getByRole('table', { name: 'Activity of this project' });
      await expect(
        activity.getByText('Launched the campaign', { exact: false }).first().isVisible(),
      ).resolves.toBe(true);
      await expectAccessible(page, 'activity');
      await shot(page, '09c-activity');

      // ---- sign out
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL('**/dashboard/sign-in');
      await page.goto(campaignUrl);
      await page.waitForURL('**/dashboard/sign-in?next=**');

      expect(cspViolations).toEqual([]);
    });

    /** A fresh phone-sized browser context (390 × 844) whose pages open under `baseURL`. */
    const phoneContext = (baseURL: string) =>
      browser.newContext({
        viewport: { width: 390, height: 844 },
        deviceScaleFactor: 1,
        isMobile: true,
        hasTouch: true,
        timezoneId: TZ,
        baseURL,
      });

    it('adds one top-off for a double click on a slow server', async () => {
      const proxy = await slowProxy(Number(new URL(sys.adminUrl).port), 600);
      const context = await phoneContext(proxy.url);
      const phone = await context.newPage();
      phone.setDefaultTimeout(20_000);
      try {
        const device = await admin(sys, 'POST', `/projects/${projectId}/devices`, { name: 'Slow desk' });
        const campaign = await admin(sys, 'POST', `/projects/${projectId}/campaigns`, {
          name: 'Slow server',
          deviceId: device.id,
          startDate: new Date(Date.now() + 3600_000).toISOString(),
          endDate: new Date(Date.now() + 2 * 86400_000).toISOString(),
          budgetMode: 'metered',
        });
        await signIn(phone);
        await phone.goto(`/dashboard/p/${projectId}/campaigns/${campaign.id}`);
        // Two clicks 250 ms apart, the answer slow to come: one top-off. Clicks of the mouse:
        // Playwright's own click would wait for the page the first one leads to.
        await phone.getByLabel('Add conversations').fill('50');
        const addTopOff = phone.getByRole('button', { name: 'Add top-off' });
        await addTopOff.scrollIntoViewIfNeeded();
        const box = (await addTopOff.boundingBox())!;
        await phone.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
        await new Promise((r) => setTimeout(r, 250));
        await phone.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
        await phone.getByText('Top-off added').waitFor();
        await new Promise((r) => setTimeout(r, 1_500)); // a second submission would have landed
        const stored = await admin(sys, 'GET', `/projects/${projectId}/campaigns/${campaign.id}`);
        expect(stored.allowance.included).toBe(50);
        await hasText(phone.locator('#allowance-text'), '0 of 50 conversations used, 50 left');
      } finally {
        await context.close();
        await proxy.close();
      }
    });

    it("keeps a campaign name with no break point within a phone's width, list and page", async () => {
      const context = await phoneContext(sys.adminUrl);
      const phone = await context.newPage();
      try {
        // A name with no break point, as a long slug or URL is; its device's too.
        const name = 'y'.repeat(200);
        const device = await admin(sys, 'POST', `/projects/${projectId}/devices`, { name: 'z'.repeat(200) });
        const campaign = await admin(sys, 'POST', `/projects/${projectId}/campaigns`, {
          name,
          deviceId: device.id,
          startDate: new Date(Date.now() + 3600_000).toISOString(),
          endDate: new Date(Date.now() + 2 * 86400_000).toISOString(),
          budgetMode: 'metered',
        });
        await signIn(phone);
        const scrollWidth = () => phone.evaluate(() => document.documentElement.scrollWidth);
        for (const [page, shotName] of [
          [`/dashboard/p/${projectId}/campaigns`, '11-long-name-list'],
          [`/dashboard/p/${projectId}/campaigns/${campaign.id}`, '12-long-name-campaign'],
          [`/dashboard/p/${projectId}/campaigns/${campaign.id}/edit`, '13-long-name-edit'],
          [`/dashboard/p/${projectId}/campaigns/${campaign.id}/launch`, '14-long-name-launch'],
          [`/dashboard/p/${projectId}/devices`, '15-long-name-devices'],
        ]) {
          await phone.goto(page);
          expect([page, (await scrollWidth()) <= 390]).toEqual([page, true]);
          await shot(phone, shotName);
        }
      } finally {
        await context.close();
      }
    });

    it('creates and renames a project, its pages and refusals accessible on a phone', async () => {
      // An operator of their own, so the other tests' operator keeps landing on their only project.
      const email = 'founder@example.com';
      const own = await admin(sys, 'POST', '/projects', { name: 'First project' });
      await createOperatorFromEnv(sys.ns.env, { email, password: PASSWORD, projectIds: [own.id] });
      const context = await phoneContext(sys.adminUrl);
      const phone = await context.newPage();
      try {
        await phone.goto('/dashboard/sign-in');
        await phone.getByLabel('E-mail address').fill(email);
        await phone.getByLabel('Password').fill(PASSWORD);
        await phone.getByRole('button', { name: 'Sign in' }).click();
        await phone.waitForURL('**/dashboard/p/*/campaigns');
        // From the header of the only project's pages.
        await phone.getByRole('link', { name: 'New project' }).click();
        await phone.waitForURL('**/dashboard/projects/new');
        await expectAccessible(phone, 'new project');
        await phone.getByRole('button', { name: 'Create project' }).click();
        // Refused by the browser first (required): the field says so, nothing is sent.
        expect(phone.url()).toMatch(/\/dashboard\/projects\/new$/);
        await phone.getByLabel('Project name').fill('   ');
        await phone.getByRole('button', { name: 'Create project' }).click();
        await hasText(phone.locator('#f-name-err'), 'Enter a name.');
        expect(await phone.locator('#f-name').getAttribute('aria-invalid')).toBe('true');
        await expectAccessible(phone, 'new project, refused');
        await shot(phone, '16-new-project-refused');
        await phone.getByLabel('Project name').fill('Second project');
        await phone.getByRole('button', { name: 'Create project' }).click();
        await phone.getByText('Project created.').waitFor();
        expect(phone.url()).toMatch(/\/dashboard\/p\/prj_[^/]+\/campaigns\?done=project-created$/);
        await hasText(phone.locator('header .project'), 'Second project');

        await phone.getByRole('link', { name: 'Operators' }).click();
        await phone.waitForURL('**/members');
        await expectAccessibleWith(phone, 'operators with project name', [
          'heading-order',
          'landmark-unique',
        ]);
        await phone.getByLabel('Project name').fill('Second project, renamed');
        await phone.getByRole('button', { name: 'Rename project' }).click();
        await phone.getByText('Project renamed.').waitFor();
        await hasText(phone.locator('header .project'), 'Second project, renamed');
        await phone.getByLabel('Project name').fill('');
        await phone.getByLabel('Project name').evaluate((el) => el.removeAttribute('required'));
        await phone.getByRole('button', { name: 'Rename project' }).click();
        await hasText(phone.locator('#f-name-err'), 'Enter a name.');
        await expectAccessibleWith(phone, 'operators, rename refused', ['heading-order', 'landmark-unique']);
        await shot(phone, '17-project-rename-refused');

        // A colleague is invited: the link, shown once, opens a page where they choose their password.
        await phone.getByLabel('E-mail address').fill('invited-colleague@example.com');
        await phone.getByRole('button', { name: 'Add operator' }).click();
        await phone.getByText('invited-colleague@example.com is invited').waitFor();
        await expectAccessibleWith(phone, 'operators, invitation made', ['heading-order', 'landmark-unique']);
        await shot(phone, '18-invitation-made');
        const link = (await phone.locator('#invite-link').textContent()) ?? '';
        const theirs = await phoneContext(sys.adminUrl);
        try {
          const colleague = await theirs.newPage();
          await colleague.goto(link);
          await colleague.getByRole('heading', { name: 'Join Second project, renamed' }).waitFor();
          await expectAccessible(colleague, 'invitation');
          await colleague.locator('#f-password').fill('colleague-password-1');
          await colleague.locator('#f-confirmPassword').fill('colleague-password-2');
          await colleague.getByRole('button', { name: 'Create my account' }).click();
          await hasText(
            colleague.locator('#f-confirmPassword-err'),
            'Type the password again, exactly as above.',
          );
          await expectAccessible(colleague, 'invitation, refused');
          await shot(colleague, '19-invitation-refused');
          await colleague.locator('#f-password').fill('colleague-password-1');
          await colleague.locator('#f-confirmPassword').fill('colleague-password-1');
          await colleague.getByRole('button', { name: 'Create my account' }).click();
          await colleague.waitForURL('**/dashboard/p/*/campaigns');
          await hasText(colleague.locator('header .project'), 'Second project, renamed');

          // Forgotten: an administrator's reset link lets them choose another, on the phone.
          const reset = await admin(sys, 'POST', '/password-resets', {
            email: 'invited-colleague@example.com',
          });
          await colleague.goto(reset.path);
          await colleague.getByRole('heading', { name: 'Choose a new password' }).waitFor();
          await colleague.locator('#f-password').fill('short');
          await colleague.locator('#f-confirmPassword').fill('short');
          await colleague.getByRole('button', { name: 'Set the password' }).click();
          await hasText(colleague.locator('#f-password-err'), 'Use at least 10 characters.');
          await expectAccessible(colleague, 'password reset, refused');
          await shot(colleague, '20-password-reset-refused');
          await colleague.locator('#f-password').fill('colleague-password-3');
          await colleague.locator('#f-confirmPassword').fill('colleague-password-3');
          await colleague.getByRole('button', { name: 'Set the password' }).click();
          await colleague.waitForURL('**/dashboard/account?done=reset');
          await colleague.getByText('Your new password is set, and you are signed in.').waitFor();
          await expectAccessible(colleague, 'password reset done');

          // Signed in on a second device too: the account page lists it, and signs it out at their word.
          const second = await phoneContext(sys.adminUrl);
          try {
            const other = await second.newPage();
            await other.goto('/dashboard/sign-in');
            await other.getByLabel('E-mail address').fill('invited-colleague@example.com');
            await other.getByLabel('Password').fill('colleague-password-3');
            await other.getByRole('button', { name: 'Sign in' }).click();
            await other.waitForURL('**/dashboard/p/*/campaigns');
            await colleague.goto('/dashboard/account');
            await colleague.getByText('Besides this one, 1 session is open.').waitFor();
            expect(
              await colleague.getByRole('table', { name: 'Your other sessions' }).locator('tbody tr').count(),
            ).toBe(1);
            await expectAccessibleWith(colleague, 'account with sessions', [
              'heading-order',
              'landmark-unique',
            ]);
            await shot(colleague, '21-account-sessions');
            colleague.once('dialog', (dialog) => dialog.accept());
            await colleague.getByRole('button', { name: 'Sign out everywhere else' }).click();
            await colleague
              .getByText('Signed out everywhere else: 1 session ended. This one goes on.')
              .waitFor();
            await other.goto('/dashboard/account');
            await other.waitForURL('**/dashboard/sign-in?next=**');
          } finally {
            await second.close();
          }
        } finally {
          await theirs.close();
        }

        // The home page lists both, with the way to another.
        await phone.goto('/dashboard');
        await expectAccessible(phone, 'projects');
        expect(await phone.getByRole('link', { name: 'New project' }).count()).toBe(2);
      } finally {
        await context.close();
      }
    });

    it("draws a full usage chart's text readable on a phone, every label inside the chart and apart", async () => {
      // 48 hours, the most the chart draws, their labels the longest it has, and a peak of 4 digits.
      const points = Array.from({ length: 48 }, (_, i) => ({
        at: new Date(Date.UTC(2026, 10, 1, i)).toISOString().slice(0, 16),
        count: i === 47 ? 1234 : i % 5,
      }));
      const chart = await page.context().newPage();
      for (const width of [375, 390]) {
        await chart.setViewportSize({ width, height: 844 });
        await chart.setContent(
          `<!doctype html><meta name="viewport" content="width=device-width, initial-scale=1"><style>${APP_CSS}</style><main>${barChart(points, 'hour', 'UTC')}</main>`,
        );
        const { svg, texts } = await chartText(chart);
        const labels = texts.filter((t) => /:/.test(t.text));
        expect([width, texts.map((t) => t.text).slice(0, 2)]).toEqual([width, ['1234', '0']]);
        expect(labels.length).toBeGreaterThanOrEqual(3);
        for (const t of texts) {
          expect([width, t.text, t.height >= 10]).toEqual([width, t.text, true]);
          expect([width, t.text, t.left >= svg.left && t.right <= svg.right]).toEqual([width, t.text, true]);
        }
        for (let i = 1; i < labels.length; i += 1)
          expect([width, labels[i].text, labels[i].left > labels[i - 1].right]).toEqual([
            width,
            labels[i].text,
            true,
          ]);
        await chart.screenshot({ path: path.join(ARTIFACTS, `dashboard-10-chart-${width}.png`) });
      }
      await chart.close();
    });
  },
);
