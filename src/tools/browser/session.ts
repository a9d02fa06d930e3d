import type { Browser, BrowserContext, Download, Locator, Page, Request, Route } from 'playwright-core';
import { DEFAULT_BROWSER_CONFIG, type BrowserConfig } from '../../config/browser.js';
import { DEFAULT_WEB_CONFIG, type NetworkPolicy } from '../../config/web.js';
import type { Sandbox } from '../../sandbox/sandbox.js';
import { ToolFailure } from '../tool-failure.js';
import type { AvailabilityContext, ToolContext } from '../tool.js';
import type { ToolResource } from '../tool-state.js';
import { checkUrl, NetworkPolicyError, urlRefusal } from '../network/network-policy.js';
import { browserAvailability, threadBrowserEngine, type BrowserEngine } from './engine.js';
import { endpointKeyOf, startPolicyProxy, type PolicyProxy, type ProxyFailure } from './policy-proxy.js';
import { capSnapshot, renderSnapshot, type AriaNode } from './snapshot.js';

/** Why a navigation of the page failed, as the model reads it; `refused` when the network policy refused it. */

/** Console messages and page errors kept at most (each). */
const CONSOLE_MAX_ENTRIES = 500;

export interface ConsoleEntry {
  type: string;
  text: string;
}

export interface NavigationFailure {
  message: string;
  refused: boolean;
}

/** Key of the rollout's browser session in ToolContext.state (disposed with the state). */
export const BROWSER_STATE_KEY = 'browser';

/** Where downloads land, relative to the sandbox's working directory. */
export const DOWNLOADS_DIR = 'downloads';
const MAX_DOWNLOAD_BYTES = 100_000_000;
const REF_PATTERN = /^(?:f\d+)?e\d+$/;

export const POLICY_HINT =
  'only public http(s) addresses are opened by default; a local test server needs its origin in web.allow_private_origins (or web.allow_private: true) in the config';

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!.replace(/^\w+\.\w+: /, '');
}

function isTimeout(error: unknown): boolean {
  return error instanceof Error && error.name === 'TimeoutError';
}

/**
 * One rollout's browser: an isolated context of the thread's browser (own cookies, storage and
 * cache), created on the first browser call and closed when the rollout's tool state is
 * disposed. Calls are serialised: two browser calls of one turn never race on the page.
 */
export class BrowserSession implements ToolResource {
  private browser: Browser | undefined;
  private context: BrowserContext | undefined;
  private page: Page | undefined;
  private refs = new Set<string>();
  private notes: string[] = [];
  /** What the pages logged and threw, for browser_console; capped so a chatty page cannot grow it without end. */
  private readonly consoleLog: ConsoleEntry[] = [];
  private readonly pageErrors: string[] = [];
  private readonly verdicts = new Map<string, Promise<string | undefined>>();
  private proxy: PolicyProxy | undefined;
  /** Why the proxy did not connect a host and port (endpointKey), for the request that failed there. */
  private readonly proxyFailures = new Map<string, ProxyFailure>();
  /** Why the page's own navigation failed: browser_navigate's error, or a note of the next result. */
  private navigationFailure: NavigationFailure | undefined;
  private readonly downloads = new Set<Promise<void>>();
  private queue: Promise<unknown> = Promise.resolve();
  private disposed = false;

  constructor(
    private readonly engine: BrowserEngine,
    readonly config: BrowserConfig,
    readonly policy: NetworkPolicy,
    private readonly sandbox: Sandbox,
  ) {}

  /** Run one tool call alone on this session, with Playwright's failures made readable. */
  exclusive<T>(action: () => Promise<T>): Promise<T> {
    const run = this.queue.then(() => this.withDeadline(this.guard(action)));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** The page calls act on; opens the context on first use. */
  async currentPage(): Promise<Page> {
    if (this.disposed) throw new ToolFailure('the browser of this rollout is closed: the rollout has ended');
    if (this.context && !this.browser!.isConnected()) this.crashed();
    if (this.page && !this.page.isClosed()) return this.page;
    if (!this.context) await this.open();
    const open = this.context!.pages().filter((page) => !page.isClosed());
    this.page = open.at(-1) ?? (await this.context!.newPage());
    return this.page;
  }

  /** Whether a context is open (browser_close reports it). */
  get isOpen(): boolean {
    return this.context !== undefined;
  }

  /** Something the next result should tell the model (a download, a refused request, a dialog). */
  note(text: string): void {
    if (this.notes.length < 20) this.notes.push(text);
  }

  /** The element a ref names, or a readable stale-ref failure. */
  /** Console messages and uncaught errors of the rollout's pages since the last clear. */
  consoleMessages(clear: boolean): { console_messages: ConsoleEntry[]; js_errors: string[] } {
    const result = { console_messages: [...this.consoleLog], js_errors: [...this.pageErrors] };
    if (clear) {
      this.consoleLog.length = 0;
      this.pageErrors.length = 0;
    }
    return result;
  }

  /** The refs of the latest snapshot (browser_vision's annotate labels them). */
  get currentRefs(): ReadonlySet<string> {
    return this.refs;
  }

  async locate(given: string): Promise<Locator> {
    // Hermes writes refs as '@e5'; the snapshot shows e5.
    const ref = given.startsWith('@') ? given.slice(1) : given;
    const page = await this.currentPage();
    if (!REF_PATTERN.test(ref))
      throw new ToolFailure(
        `'${ref}' is not an element ref`,
        'pass a ref such as e12 exactly as the latest snapshot shows it',
      );
    const locator = page.getByRef(ref);
    if (!this.refs.has(ref) || (await locator.count()) === 0) {
      throw new ToolFailure(
        `ref ${ref} is stale: no such element on the page as it is now (it changed or navigated since that snapshot)`,
        'call browser_snapshot and use a ref from the new snapshot',
      );
    }
    return locator;
  }

  /** Wait for a navigation an action may have started, up to the navigation timeout. */
  async settle(page: Page): Promise<void> {
    try {
      await page.waitForLoadState('load', { timeout: this.config.navigation_timeout_ms });
    } catch (error) {
      if (!isTimeout(error)) throw error;
      this.note(
        `the page did not finish loading within ${this.config.navigation_timeout_ms} ms; this is what it shows so far`,
      );
    }
  }

  /** The page as text: URL, title, notes since the last result, and the snapshot with its refs. */
  async report(options: { full?: boolean; lead?: string } = {}): Promise<string> {
    const page = await this.currentPage();
    await this.flushDownloads();
    const nodes = (await page.ariaSnapshotJSON({
      mode: 'ai',
      timeout: this.config.navigation_timeout_ms,
    })) as AriaNode[];
    const rendered = renderSnapshot(nodes, options.full);
    this.refs = rendered.refs;
    const snapshot = capSnapshot(rendered.text || '(the page shows nothing)', this.config.snapshot_max_chars);
    const lines = [...(options.lead ? [options.lead] : []), `URL: ${page.url()}`, `Title: ${await page.title()}`];
    const failed = this.takeNavigationFailure();
    for (const note of [...(failed ? [failed.message] : []), ...this.notes.splice(0)]) lines.push(`Note: ${note}`);
    lines.push(`Snapshot${options.full ? ' (full)' : ''}:`, snapshot.text);
    return lines.join('\n');
  }

  /** Why the page's latest navigation failed at the policy or the proxy (once), or undefined. */
  takeNavigationFailure(): NavigationFailure | undefined {
    const failure = this.navigationFailure;
    this.navigationFailure = undefined;
    return failure;
  }

  /** Close the context (browser_close); the next call opens a fresh one. */
  async closeContext(): Promise<void> {
    const context = this.context;
    this.context = undefined;
    this.page = undefined;
    this.refs = new Set();
    await context?.close().catch(() => undefined);
    await this.dropProxy();
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    await this.closeContext();
  }

  private async open(): Promise<void> {
    this.proxy = await this.startProxy();
    const { browser, context } = await this.engine
      .newContext({
        acceptDownloads: true,
        serviceWorkers: 'block',
        viewport: { width: 1280, height: 800 },
        ...(this.proxy ? { proxy: { server: this.proxy.url } } : {}),
      })
      .catch(async (error: unknown) => {
        await this.dropProxy();
        throw error;
      });
    if (this.disposed) {
      await context.close().catch(() => undefined);
      await this.dropProxy();
      throw new ToolFailure('the browser of this rollout is closed: the rollout has ended');
    }
    this.browser = browser;
    this.context = context;
    context.setDefaultTimeout(this.config.action_timeout_ms);
    context.setDefaultNavigationTimeout(this.config.navigation_timeout_ms);
    await context.route('**/*', (route) => this.filter(route));
    context.on('page', (page) => this.adopt(page));
    context.on('requestfailed', (request) => this.proxyFailed(request));
  }

  /**
   * A browser we launch connects through the policy proxy. One reached over cdp_url may run
   * elsewhere (a hosted service, a container) and could not reach a proxy on our loopback; it has
   * only the route, which does not see redirect hops.
   */
  private async startProxy(): Promise<PolicyProxy | undefined> {
    if (this.engine.config.cdp_url) return undefined;
    return startPolicyProxy(this.policy, (failure) => this.proxyFailures.set(failure.key, failure));
  }

  private async dropProxy(): Promise<void> {
    const proxy = this.proxy;
    this.proxy = undefined;
    await proxy?.close();
  }

  /** New pages (the first one, popups, target=_blank) become the page calls act on. */
  private adopt(page: Page): void {
    if (this.page && !this.page.isClosed()) this.note(`a new tab opened (${page.url()}); the browser now shows it`);
    this.page = page;
    page.on('download', (download) => this.track(this.saveDownload(download)));
    page.on('console', (message) => {
      if (this.consoleLog.length < CONSOLE_MAX_ENTRIES)
        this.consoleLog.push({ type: message.type(), text: message.text() });
    });
    page.on('pageerror', (error) => {
      if (this.pageErrors.length < CONSOLE_MAX_ENTRIES) this.pageErrors.push(error.message);
    });
    page.on('dialog', (dialog) => {
      this.note(`a ${dialog.type()} dialog said ${JSON.stringify(dialog.message().slice(0, 200))}; it was dismissed`);
      void dialog.dismiss().catch(() => undefined);
    });
  }

  /**
   * The first hop of every request of every page passes the network policy here, judged with its
   * whole URL. Redirect hops never reach a route; the proxy judges those (proxyFailed).
   */
  private async filter(route: Route): Promise<void> {
    const refusal = await this.refusal(route.request().url());
    if (refusal) {
      this.refused(route.request(), refusal);
      await route.abort('blockedbyclient').catch(() => undefined);
      return;
    }
    await route.continue().catch(() => undefined);
  }

  /** A request the proxy did not connect: Chromium says only "SOCKS connection failed"; the proxy knows why. */
  private proxyFailed(request: Request): void {
    if (!/ERR_SOCKS_CONNECTION_FAILED/.test(request.failure()?.errorText ?? '')) return;
    const key = endpointKeyOf(request.url()) ?? '';
    const failure = this.proxyFailures.get(key);
    if (!failure) return;
    if (failure.refused) return this.refused(request, failure.reason);
    // A refused connection or a missing host may be different next time; a policy verdict is not.
    this.proxyFailures.delete(key);
    if (this.isPageNavigation(request))
      this.navigationFailure = {
        message: `could not open ${request.url().slice(0, 200)}: ${failure.reason}`,
        refused: false,
      };
  }

  /** A refusal, named with its URL and the hop that redirected to it: the page's own navigation fails, anything else is a note. */
  private refused(request: Request, reason: string): void {
    const message = new NetworkPolicyError(
      request.url().slice(0, 200),
      reason,
      request.redirectedFrom()?.url().slice(0, 200),
    ).message;
    if (this.isPageNavigation(request)) this.navigationFailure = { message, refused: true };
    else this.note(message);
  }

  private isPageNavigation(request: Request): boolean {
    try {
      return request.isNavigationRequest() && request.frame() === this.page?.mainFrame();
    } catch {
      return false; // a service worker's request has no frame
    }
  }

  /** The policy's verdict on a URL; host names are resolved once per session. */
  async refusal(url: string): Promise<string | undefined> {
    const early = urlRefusal(url, this.policy);
    if (early) return early;
    const { protocol, host } = new URL(url);
    // The port is part of the key: web.allow_private_origins names a host and port.
    const key = `${protocol}//${host}`;
    let verdict = this.verdicts.get(key);
    if (!verdict) {
      verdict = checkUrl(url, this.policy);
      this.verdicts.set(key, verdict);
    }
    return verdict;
  }

  private track(saving: Promise<void>): void {
    this.downloads.add(saving);
    void saving.finally(() => this.downloads.delete(saving));
  }

  private async flushDownloads(): Promise<void> {
    if (this.downloads.size > 0) await Promise.all(this.downloads);
  }

  /** Downloads go into the rollout's sandbox (works for Docker too), never the host's folders. */
  private async saveDownload(download: Download): Promise<void> {
    const name =
      download
        .suggestedFilename()
        .replace(/[^\w.-]/g, '_')
        .replace(/^\.+/, '') || 'download';
    const path = `${DOWNLOADS_DIR}/${name}`;
    try {
      const stream = await download.createReadStream();
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of stream) {
        size += (chunk as Buffer).length;
        if (size > MAX_DOWNLOAD_BYTES) throw new Error(`larger than ${MAX_DOWNLOAD_BYTES} bytes`);
        chunks.push(chunk as Buffer);
      }
      await this.sandbox.writeFile(path, Buffer.concat(chunks));
      this.note(`downloaded ${download.url().slice(0, 200)} to ${path} (${size} bytes) in the working directory`);
    } catch (error) {
      this.note(`the download of ${download.url().slice(0, 200)} failed: ${firstLine(error)}`);
    }
  }

  private crashed(): never {
    this.context = undefined;
    this.page = undefined;
    this.refs = new Set();
    void this.dropProxy();
    throw new ToolFailure(
      "the browser crashed and was restarted; this rollout's pages, cookies and refs are gone",
      'call browser_navigate to open the page again',
    );
  }

  /**
   * Every Playwright step has its own timeout except script evaluation; a page whose script never
   * yields would hold the call until the rollout ends. Past a deadline that covers the longest
   * legitimate call (navigate, settle and snapshot, each up to the navigation timeout), the model
   * gets an error instead; the page stays as it is.
   */
  private withDeadline<T>(call: Promise<T>): Promise<T> {
    const ms = 3 * this.config.navigation_timeout_ms + this.config.action_timeout_ms;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      const failure = new ToolFailure(
        `the page did not respond within ${ms} ms (a script may be stuck)`,
        'try browser_navigate to another page, or browser_close',
      );
      timer = setTimeout(() => reject(failure), ms);
    });
    return Promise.race([call, deadline]).finally(() => clearTimeout(timer));
  }

  private async guard<T>(action: () => Promise<T>): Promise<T> {
    try {
      return await action();
    } catch (error) {
      if (error instanceof ToolFailure) throw error;
      if (this.disposed) throw new ToolFailure('the browser of this rollout is closed: the rollout has ended');
      if (this.context && !this.browser?.isConnected()) this.crashed();
      if (isTimeout(error)) {
        throw new ToolFailure(
          firstLine(error),
          'the element may be hidden, disabled or covered; take a new snapshot and try another element',
        );
      }
      throw new ToolFailure(firstLine(error));
    }
  }
}

/** The rollout's browser session, created on first use with the surface's browser and web settings. */
export function browserSession(context: ToolContext): BrowserSession {
  const existing = context.state.get(BROWSER_STATE_KEY);
  if (existing instanceof BrowserSession) return existing;
  const config = context.services?.settings.browser ?? DEFAULT_BROWSER_CONFIG;
  const session = new BrowserSession(
    threadBrowserEngine(config),
    config,
    context.services?.settings.web ?? DEFAULT_WEB_CONFIG,
    context.sandbox,
  );
  context.state.set(BROWSER_STATE_KEY, session);
  return session;
}

export { firstLine, isTimeout };

/** The browser toolset is offered when a Chromium is found (or a CDP URL is set). */
export function browserAvailable({ services }: AvailabilityContext): true | string {
  return browserAvailability(services?.settings.browser ?? DEFAULT_BROWSER_CONFIG);
}
