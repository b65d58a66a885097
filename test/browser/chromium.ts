/**
 * What every browser test needs: Debian's Chromium driven by playwright-core (CHROMIUM_PATH
 * overrides /usr/bin/chromium; .ci/run installs the `chromium` package), and the SDK bundled
 * for the page as a client app's bundler would include it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { chromium, type Browser } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (!existsSync(CHROMIUM)) {
  throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium), or set CHROMIUM_PATH`);
}

/** Headless Chromium; `args` adds to the usual flags (e.g. a host resolver rule). */
export function launchChromium(args: string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', ...args] });
}

/** An SDK entry point (`index`, `realtime`...) as one browser script defining `window[globalName]`. */
export function sdkBundle(entry: string, globalName: string): string {
  return buildSync({
    entryPoints: [join(__dirname, `../../sdk/src/${entry}.ts`)],
    bundle: true,
    format: 'iife',
    globalName,
    platform: 'browser',
    target: 'chrome120',
    write: false,
  }).outputFiles[0].text;
}
