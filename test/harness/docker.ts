/**
 * Test helpers for tests that need the real Docker engine and the sandbox image.
 *
 * - {@link requireDocker}: in CI (`CI=true`) a missing engine or image FAILS the test; elsewhere the
 *   test is skipped and the reason is printed and appended to its title.
 * - {@link ensureTestImage}: builds expbench/sandbox:1 with sandbox/build-offline.sh once when it is
 *   missing (minutes; call it from a `before` hook with a long timeout).
 * - {@link assertNoContainers}: the "nothing left behind" check for an after hook.
 */
import * as assert from 'node:assert/strict';
import type Docker from 'dockerode';
import { isExpBenchError } from '../../src/core/errors';
import { DEFAULT_IMAGE, buildOfflineImage, connectDocker, ensureEngine, ensureImage, listProjectContainers } from '../../src/core/sandbox';
import { verifyRemovalsSettled } from '../../src/core/verify';

/** True when running in CI, where Docker tests must not be skipped. */
export const inCI = process.env.CI === 'true';

function skipOrFail(ctx: Mocha.Context, reason: string): never {
  if (inCI) throw new Error(`CI=true and ${reason}`);
  if (ctx.test) ctx.test.title += ` (SKIPPED: ${reason})`;
  console.warn(`  [docker] skipping: ${reason}`);
  ctx.skip();
}

/**
 * Returns a client for the engine, after checking that it answers and that `image` exists with
 * the contract label. Skips (locally) or fails (CI) otherwise. Call with `this` of a mocha hook or test.
 * @param image the image the tests need; pass null when only the engine is needed
 */
export async function requireDocker(ctx: Mocha.Context, image: string | null = DEFAULT_IMAGE): Promise<Docker> {
  const docker = connectDocker();
  try {
    await ensureEngine(docker);
    if (image) await ensureImage(docker, image);
  } catch (e) {
    if (isExpBenchError(e)) skipOrFail(ctx, e.message);
    throw e;
  }
  return docker;
}

let building: Promise<void> | undefined;

/**
 * Builds the default image once per process if it is missing (sandbox/build-offline.sh; skips
 * quickly when present). Needs root and an engine; without an engine it returns and lets
 * {@link requireDocker} decide. Builder output goes to stderr with a prefix.
 */
export async function ensureTestImage(image = DEFAULT_IMAGE): Promise<void> {
  const docker = connectDocker();
  try { await ensureEngine(docker); } catch { return; }
  try { await ensureImage(docker, image); return; } catch (e) { if (!isExpBenchError(e, 'IMAGE_MISSING')) throw e; }
  building ??= buildOfflineImage({ image, onLine: (l) => process.stderr.write(`  [build-offline] ${l}\n`) });
  await building;
}

/**
 * Asserts that no container labelled with one of `sessions` exists (any state) once this process's
 * verify container removals have settled (src/core/verify/finish.ts `verifyRemovalsSettled`), i.e.
 * `docker ps -a --filter label=expbench.session=<s>` is empty for each.
 */
export async function assertNoContainers(docker: Docker, sessions: Iterable<string>): Promise<void> {
  await verifyRemovalsSettled(); // a verification returns once its record is final; its container's removal may end just after
  const left: string[] = [];
  for (const session of sessions) {
    for (const c of await listProjectContainers(docker, { session })) left.push(`${c.Id.slice(0, 12)} (${session}, ${c.State})`);
  }
  assert.deepEqual(left, [], `containers left behind: ${left.join(', ')}`);
}
