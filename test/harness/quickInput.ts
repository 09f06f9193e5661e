// Quick input steps (VS Code's quick pick and input box) that wait on the widget's state, never on
// timing: the widget shown after the click that opens it, a row picked only once it is listed, and
// an answer typed into the input box only once the box with that title shows, checked in the box,
// and accepted only when the box has closed.
import type { Locator } from 'playwright-core';
import { asRegExp, firstLine, type LabelMatch, listedRows, type Workbench } from './workbench';

/**
 * Clicks `target` (a link or button, in the page or in a webview) until the quick input shows: a
 * webview that draws its section again (a second post of the same data) replaces the element, and
 * a click on the replaced one is lost. Each click is followed by a bounded wait for the widget.
 * @returns the widget (`.quick-input-widget`), visible
 * @throws Error naming the target when no quick input shows within `wb.timeoutMs`
 */
export async function clickUntilQuickInput(wb: Workbench, target: Locator): Promise<Locator> {
  const widget = wb.page.locator('.quick-input-widget');
  await wb.clickUntil(target, widget);
  return widget;
}

/**
 * Picks the quick pick's row whose label matches `row`, once it is listed, and waits until the
 * quick input titled `next` shows (the next step of the same flow).
 * @throws Error listing the rows shown when the row never shows, or naming `next` when it never follows
 */
export async function pickQuickRow(wb: Workbench, row: LabelMatch, next: LabelMatch): Promise<void> {
  const widget = wb.page.locator('.quick-input-widget');
  const want = widget.locator('.monaco-list-row').filter({ has: wb.page.locator('.label-name', { hasText: asRegExp(row) }) }).first();
  await want.waitFor({ state: 'visible', timeout: wb.timeoutMs }).catch(async (e: unknown) => {
    throw new Error(`pickQuickRow: no row ${String(row)} (rows: ${await listedRows(widget)}): ${firstLine(e)}`);
  });
  await want.click();
  await widget.locator('.quick-input-title', { hasText: asRegExp(next) }).waitFor({ state: 'visible', timeout: wb.timeoutMs })
    .catch((e: unknown) => { throw new Error(`pickQuickRow: ${String(row)} picked, but no quick input titled ${String(next)} followed: ${firstLine(e)}`); });
}

/**
 * Answers the input box titled `title` with `text`: waits for that box, fills its input and waits
 * until the input holds exactly `text` (characters typed before the box had focus would be lost or
 * land elsewhere), presses Enter in it, and waits until the box with that title has closed.
 * @throws Error with the box's validation message when it stays open after Enter
 */
export async function answerInputBox(wb: Workbench, title: LabelMatch, text: string): Promise<void> {
  const widget = wb.page.locator('.quick-input-widget');
  const heading = widget.locator('.quick-input-title', { hasText: asRegExp(title) });
  await heading.waitFor({ state: 'visible', timeout: wb.timeoutMs })
    .catch((e: unknown) => { throw new Error(`answerInputBox: no input box titled ${String(title)}: ${firstLine(e)}`); });
  const input = widget.locator('.quick-input-box input').first();
  await input.fill(text);
  await wb.page.waitForFunction(([el, want]) => (el as HTMLInputElement).value === want, [await input.elementHandle(), text] as const, { timeout: wb.timeoutMs });
  await input.press('Enter');
  await heading.waitFor({ state: 'hidden', timeout: wb.timeoutMs }).catch(async (e: unknown) => {
    const said = await widget.locator('.quick-input-message').innerText().catch(() => '');
    throw new Error(`answerInputBox: the box ${String(title)} stayed open after Enter${said ? ` ("${said}")` : ''}: ${firstLine(e)}`);
  });
}
