import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errorMessage } from '../errors.js';
import { escapeHtml } from '../report/html-parts.js';
import { comparePage, compareStores } from './compare-page.js';
import { parseItemQuery } from './item-query.js';
import { layout, VIEW_STYLE } from './layout.js';
import { plotsPage } from './plots-page.js';
import { RunCatalog } from './run-catalog.js';
import { runPage } from './run-page.js';
import { runsPage, type RunListing } from './runs-page.js';
import { SessionReader } from './session-reader.js';
import { sessionPage } from './session-page.js';
import { trajectoryPage } from './trajectory-page.js';

export interface ViewerOptions {
  /** Run names (looked up in `checkpointsDir`) or .sqlite paths; empty = every store there. */
  stores: readonly string[];
  checkpointsDir: string;
  sessionsPath: string;
  host: string;
  port: number;
}

export interface Viewer {
  url: string;
  host: string;
  port: number;
  /** What is served right now: run names, and how many chat sessions. */
  contents(): { runs: string[]; sessions: number };
  close(): Promise<void>;
}

/**
 * No script runs on any page and nothing loads from elsewhere: the stylesheet comes from the
 * viewer, images only as inline SVG. Model output is escaped on top of that.
 */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

class HttpProblem extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Serve the viewer; resolves once it listens. Read-only: GET and HEAD only, stores opened read-only. */
export async function startViewer(options: ViewerOptions): Promise<Viewer> {
  const routes = new ViewerRoutes(options);
  const server: Server = createServer((request, response) => routes.answer(request, response));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}/`,
    host: address.address,
    port: address.port,
    contents: () => routes.contents(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          routes.close();
          resolve();
        });
      }),
  };
}

/** The viewer's pages: the run catalog and the chat sessions, read-only. */
class ViewerRoutes {
  private readonly catalog: RunCatalog;
  private readonly sessions: SessionReader;
  private readonly loopbackOnly: boolean;

  constructor(private readonly options: ViewerOptions) {
    this.catalog = new RunCatalog(options.stores, options.checkpointsDir);
    this.sessions = new SessionReader(options.sessionsPath);
    this.loopbackOnly = isLoopback(options.host);
  }

  contents(): { runs: string[]; sessions: number } {
    return { runs: this.catalog.entries().map((entry) => entry.name), sessions: this.sessions.count() };
  }

  close(): void {
    this.catalog.close();
    this.sessions.close();
  }

  answer(request: IncomingMessage, response: ServerResponse): void {
    try {
      this.handle(request, response);
    } catch (error) {
      const status = error instanceof HttpProblem ? error.status : 500;
      send(
        response,
        status,
        layout(`traj view · ${status}`, `<h1>${status}</h1><p data-problem>${escapeHtml(errorMessage(error))}</p>`),
        request.method === 'HEAD',
      );
    }
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8', ...SECURITY_HEADERS });
      response.end('traj view is read-only: GET and HEAD only\n');
      return;
    }
    // A page bound to loopback answers only to loopback names: a web page elsewhere cannot reach it
    // through a DNS name that resolves to 127.0.0.1 (DNS rebinding).
    const hostHeader = (request.headers.host ?? '').replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
    if (this.loopbackOnly && !isLoopback(hostHeader))
      throw new HttpProblem(403, `host '${hostHeader}' is not a loopback name`);
    const url = new URL(request.url ?? '/', 'http://viewer.invalid');
    const head = request.method === 'HEAD';
    if (url.pathname === '/assets/view.css') {
      response.writeHead(200, { 'content-type': 'text/css; charset=utf-8', ...SECURITY_HEADERS });
      response.end(head ? undefined : VIEW_STYLE);
      return;
    }
    send(response, 200, this.route(url), head);
  }

  /** The page at a URL, or an HttpProblem. */
  private route(url: URL): string {
    const parts = url.pathname.split('/').filter(Boolean).map(decodePart);
    if (parts.length === 0) return this.listing();
    if (parts[0] === 'runs' && parts.length >= 2) return this.runRoute(parts[1]!, parts.slice(2), url.searchParams);
    if (parts[0] === 'compare') return this.compareRoute(url.searchParams);
    if (parts[0] === 'sessions' && parts.length === 2) {
      const found = this.sessions.get(parts[1]!);
      if (!found) throw new HttpProblem(404, `no chat session '${parts[1]}' in ${this.options.sessionsPath}`);
      return sessionPage(found.session, found.messages);
    }
    throw new HttpProblem(404, `nothing at ${url.pathname}`);
  }

  private listing(): string {
    const runs: RunListing[] = this.catalog.entries().map((entry) => {
      try {
        return { name: entry.name, summary: this.catalog.reader(entry.name)!.summary(entry.name) };
      } catch (error) {
        return { name: entry.name, error: errorMessage(error) };
      }
    });
    return runsPage(runs, this.sessions.list(), this.options.sessionsPath);
  }

  private reader(name: string) {
    const found = this.catalog.reader(name);
    if (!found) throw new HttpProblem(404, `no run '${name}' (the runs page lists them)`);
    return found;
  }

  private runRoute(name: string, rest: string[], parameters: URLSearchParams): string {
    const store = this.reader(name);
    if (rest.length === 0) {
      const started = performance.now();
      const { query, problems } = parseItemQuery(parameters);
      const page = store.page(query);
      const summary = store.summary(name);
      const facets = store.facets();
      return runPage({ name, summary, facets, query, page, problems, queryMs: performance.now() - started });
    }
    if (rest[0] === 'plots' && rest.length === 1) return plotsPage(name, store.plots());
    if (rest[0] === 'item' && rest.length === 1) {
      const key = parameters.get('key');
      const sample = Number(parameters.get('sample') ?? '0');
      if (key === null || !Number.isInteger(sample)) throw new HttpProblem(400, 'give ?key=KEY&sample=N');
      const row = store.item(key, sample);
      if (!row) throw new HttpProblem(404, `run '${name}' has no item ${key} sample ${sample}`);
      return trajectoryPage(name, this.catalog.forkArgument(name), row);
    }
    throw new HttpProblem(404, `nothing at /runs/${name}/${rest.join('/')}`);
  }

  private compareRoute(parameters: URLSearchParams): string {
    const a = parameters.get('a');
    const b = parameters.get('b');
    if (!a || !b) throw new HttpProblem(400, 'give two runs: /compare?a=RUN&b=RUN');
    return comparePage({ a, b }, compareStores({ a, b }, this.reader(a), this.reader(b)));
  }
}

function decodePart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new HttpProblem(400, `malformed escape in the path: '${part}'`);
  }
}

function send(response: ServerResponse, status: number, html: string, head: boolean): void {
  response.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(html),
    ...SECURITY_HEADERS,
  });
  response.end(head ? undefined : html);
}
