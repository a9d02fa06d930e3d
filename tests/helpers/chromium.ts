import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { it, type TestContext } from 'node:test';
import type { Browser } from 'playwright-core';
import { CHROMIUM_FLAGS, findChromium } from '../../src/tools/browser/index.js';

const CHROMIUM = '/usr/bin/chromium';

/** True (the test skipped) when Debian's chromium is missing; under CI that fails the test instead. */
export function chromiumMissing(t: TestContext): boolean {
  if (existsSync(CHROMIUM)) return false;
  if (process.env.CI) assert.fail(`${CHROMIUM} is missing (CI installs Debian's chromium)`);
  t.skip(`skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`);
  return true;
}

/** Headless Chromium with the flags traj's browser toolset uses, closed when the test ends. */
export async function launchChromium(t: TestContext): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
  t.after(() => browser.close());
  return browser;
}

/**
 * For a suite of browser-tool tests (they launch the Chromium found on PATH): `{ skip: reason }`
 * without one; under CI that is also a failing test, so the browser tests cannot silently skip there.
 */
export function browserSuiteOptions(): { skip?: string } {
  if (findChromium()) return {};
  const reason = 'skipped: no chromium on PATH (apt-get install chromium)';
  if (process.env.CI) it('a Chromium is on PATH (CI installs the chromium package)', () => assert.fail(reason));
  return { skip: reason };
}
