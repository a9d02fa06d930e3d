import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import type { TestContext } from 'node:test';
import type { Browser } from 'playwright-core';
import { CHROMIUM_FLAGS } from '../../src/tools/browser/index.js';

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
