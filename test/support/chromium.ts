import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Debian's Chromium, which the browser tests drive (scripts/ensure-chromium.sh installs it). */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * Launches Debian's Chromium headless. Without the background-networking flags it keeps trying
 * hosts this machine's closed network refuses.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

const BROWSER_TEST_MS = 60_000;

/**
 * `describe` when Chromium is installed, else `describe.skip` with a warning naming `file`:
 * `npm test` on a machine without it still runs everything else (`.ci/run` installs it). Each
 * test of the file gets a minute.
 */
export function describeWithChromium(file: string): jest.Describe {
  if (existsSync(CHROMIUM)) {
    // Longer than Playwright's own 30 s waits: one that never ends fails naming what it waited
    // for, where the test's timeout would name only the test.
    jest.setTimeout(BROWSER_TEST_MS);
    return describe;
  }
  console.warn(`${file} skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`);
  return describe.skip;
}
