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

/**
 * `describe` when Chromium is installed, else `describe.skip` with a warning naming `file`:
 * `npm test` on a machine without it still runs everything else (`.ci/run` installs it).
 */
export function describeWithChromium(file: string): jest.Describe {
  if (existsSync(CHROMIUM)) return describe;
  console.warn(`${file} skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`);
  return describe.skip;
}
