// Headless Debian Chromium driven by playwright-core (no browser download: executablePath).
// Flags from ../shared/docs/offline-vscode.md; without the background-networking ones Chromium
// keeps trying Google hosts that this machine cannot reach.
import { chromium, type Browser } from 'playwright-core';
import { chromiumPath, requireFile } from './paths';

export const chromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
  '--no-first-run',
];

/** Launches headless Chromium; throws naming the binary when it is not installed. */
export async function launchChromium(): Promise<Browser> {
  requireFile(chromiumPath, 'bash scripts/setup-apt.sh');
  return chromium.launch({ executablePath: chromiumPath, headless: true, args: chromiumArgs, timeout: 60_000 });
}
