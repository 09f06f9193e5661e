import type { Frame } from 'playwright-core';
import type { Workbench } from './workbench';

/**
 * The frame of the visible trajectory viewer whose header names `name` (a file's base name), once
 * its first row is drawn; polls the page's frames every 250 ms.
 * @throws Error when no such viewer is visible within 60 s
 */
export async function viewerFrame(wb: Workbench, name: string): Promise<Frame> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    for (const frame of wb.page.frames()) {
      const title = frame.locator('main.traj .head .title strong', { hasText: name }).first();
      if (await title.isVisible().catch(() => false)) {
        await frame.locator('.row[data-step]').first().waitFor({ state: 'visible', timeout: 60_000 });
        return frame;
      }
    }
    await wb.page.waitForTimeout(250);
  }
  throw new Error(`no visible trajectory viewer of ${name} within 60 s`);
}
