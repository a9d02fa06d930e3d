import { accessSync, constants } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';
import type { BrowserConfig } from '../../config/browser.js';
import { PROFILE_PREFIX, profileRoot, pruneLeftoverBrowsers } from './leftovers.js';

/**
 * Flags for a headless Chromium that works as root in a container, never reaches Google's
 * services on its own, and starts quickly. Playwright adds its own automation defaults.
 */
export const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

const CANDIDATES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

function executableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

const found = new Map<string, string | undefined>();

/**
 * The Chromium binary on PATH (Debian's `chromium`, …), or undefined; looked up once per PATH (availability asks per
 * rollout).
 */
export function findChromium(path = process.env.PATH ?? ''): string | undefined {
  if (!found.has(path)) found.set(path, searchPath(path));
  return found.get(path);
}

function searchPath(path: string): string | undefined {
  for (const name of CANDIDATES) {
    for (const folder of path.split(delimiter).filter(Boolean)) {
      const candidate = join(folder, name);
      if (executableFile(candidate)) return candidate;
    }
  }
  return undefined;
}

/** Why the browser toolset cannot run with this config, or true. */
export function browserAvailability(config: BrowserConfig): true | string {
  if (config.cdp_url) return true;
  if (config.executable)
    return executableFile(config.executable)
      ? true
      : `browser.executable ${config.executable} is not an executable file`;
  return findChromium()
    ? true
    : 'no Chromium found on PATH (install chromium, or set browser.executable or browser.cdp_url)';
}

/** A running (or connected) browser and how to end it. */
interface RunningBrowser {
  browser: Browser;
  /** The profile folder of a launched browser (its command line names it). */
  profile?: string;
  close(): Promise<void>;
}

/**
 * One browser per thread and config, started on first use. Rollouts get isolated contexts from
 * it. When the browser dies, the next request starts a new one; sessions on the dead one notice
 * through `isConnected()` and tell the model.
 */
export class BrowserEngine {
  private running: Promise<RunningBrowser> | undefined;
  private readonly contexts = new Set<BrowserContext>();
  private closed = false;

  constructor(readonly config: BrowserConfig) {}

  /** A fresh, isolated context (own cookies, storage, cache) and the browser it lives in. */
  async newContext(
    options: Parameters<Browser['newContext']>[0] = {},
  ): Promise<{ browser: Browser; context: BrowserContext }> {
    const { browser } = await this.browser();
    const context = await browser.newContext(options);
    this.contexts.add(context);
    context.once('close', () => this.contexts.delete(context));
    return { browser, context };
  }

  /** Contexts open now (tests and the leak check read it). */
  get openContexts(): number {
    return this.contexts.size;
  }

  /** The profile folder of the launched browser, if one runs (tests kill its process with it). */
  async profile(): Promise<string | undefined> {
    return this.running ? (await this.running.catch(() => undefined))?.profile : undefined;
  }

  private browser(): Promise<RunningBrowser> {
    // A call still in flight when the thread shuts down must not start a browser nobody closes.
    if (this.closed) return Promise.reject(new Error('the browser engine of this thread is closed'));
    if (!this.running) {
      const starting = this.config.cdp_url ? connect(this.config) : launch(this.config);
      this.running = starting;
      starting.then(
        (running) =>
          running.browser.once('disconnected', () => {
            if (this.running === starting) this.running = undefined;
            this.contexts.clear();
            void running.close();
          }),
        () => {
          if (this.running === starting) this.running = undefined;
        },
      );
    }
    return this.running;
  }

  async close(): Promise<void> {
    this.closed = true;
    const running = this.running;
    this.running = undefined;
    this.contexts.clear();
    if (running) await (await running.catch(() => undefined))?.close();
  }
}

async function launch(config: BrowserConfig): Promise<RunningBrowser> {
  const executablePath = config.executable ?? findChromium();
  if (!executablePath) throw new Error(browserAvailability(config) as string);
  const { chromium } = await import('playwright-core');
  await pruneLeftoverBrowsers();
  // The owner's pid in the folder name is what the next start prunes by (leftovers.ts).
  const folder = await mkdtemp(join(profileRoot(), `${PROFILE_PREFIX}${process.pid}-`));
  try {
    // A persistent launch is the one that takes our profile folder; rollouts never use its default
    // context, only the isolated ones made with browser.newContext().
    const persistent = await chromium.launchPersistentContext(join(folder, 'profile'), {
      executablePath,
      headless: true,
      args: CHROMIUM_FLAGS,
      downloadsPath: join(folder, 'downloads'),
      // Inside the profile folder, not a playwright-artifacts-* of its own in the temp dir: a
      // SIGKILLed run then leaves one folder behind, which the next start prunes by its owner.
      artifactsDir: join(folder, 'artifacts'),
      // Chromium's own temp files (its singleton socket folder) too: a crashed or killed browser
      // leaves them there, removed with the profile, not as org.chromium.Chromium.* in the temp dir.
      env: { ...process.env, TMPDIR: await temporaryFolderIn(folder) },
      timeout: config.launch_timeout_ms,
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
    const browser = persistent.browser()!;
    let closed: Promise<void> | undefined;
    return {
      browser,
      profile: folder,
      close: () =>
        (closed ??= (async () => {
          await persistent.close().catch(() => undefined);
          await rm(folder, { recursive: true, force: true });
        })()),
    };
  } catch (error) {
    await rm(folder, { recursive: true, force: true });
    throw error;
  }
}

async function temporaryFolderIn(profile: string): Promise<string> {
  const folder = join(profile, 'tmp');
  await mkdir(folder);
  return folder;
}

async function connect(config: BrowserConfig): Promise<RunningBrowser> {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.connectOverCDP(config.cdp_url!, { timeout: config.launch_timeout_ms });
  // Closing a connected browser drops our contexts and disconnects; the remote browser lives on.
  return { browser, close: () => browser.close().catch(() => undefined) };
}

const engines = new Map<string, BrowserEngine>();

/** This thread's engine for the config (module state is per worker thread). */
export function threadBrowserEngine(config: BrowserConfig): BrowserEngine {
  const key = JSON.stringify([config.executable, config.cdp_url, config.launch_timeout_ms]);
  let engine = engines.get(key);
  if (!engine) {
    engine = new BrowserEngine(config);
    engines.set(key, engine);
  }
  return engine;
}

/** Close this thread's browsers (the worker's services close, chat exit, `traj ask`). */
export async function closeBrowserEngines(): Promise<void> {
  const all = [...engines.values()];
  engines.clear();
  await Promise.all(all.map((engine) => engine.close()));
}
