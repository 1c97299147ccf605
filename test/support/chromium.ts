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
