import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';

/**
 * An attacker's setup for redirect tests. The "public" site is a server on 127.0.0.1 that the
 * tests' policy lists in web.allow_private_origins (as a real public site would pass the
 * policy); its pages redirect wherever the test says. The internal services sit on 127.0.0.1,
 * [::1] and this host's own non-loopback address, serve a secret, and count every connection,
 * so a test can show that none was even opened.
 */
export const SECRET = 'INTERNAL-SECRET-7f3c';

export interface InternalService {
  url: string;
  /** TCP connections accepted (a refused hop opens none). */
  connections: number;
}

export interface InternalTarget {
  name: string;
  /** Where the public page redirects to. */
  url: string;
  /** The refusal the model must read, after "redirect from … to URL: ". */
  reason: RegExp;
  /** The service that would answer, when one can listen there. */
  service?: InternalService;
}

export interface AttackSite {
  /** The public site's origin (http://127.0.0.1:PORT). */
  url: string;
  /** A URL on the public site that answers 302 to `to`, after `hops - 1` redirects of its own. */
  redirect(to: string, hops?: number): string;
  /** A public page whose image goes through a redirect to `to`. */
  imagePage(to: string): string;
  /** A public page with a link through a redirect to `to`. */
  linkPage(to: string): string;
  /** A public page whose script opens a WebSocket to `to`; its title turns "Socket closed" when that fails. */
  socketPage(to: string): string;
  targets: InternalTarget[];
  /** Requests the public site answered, by path. */
  hits: string[];
  close(): Promise<void>;
}

const page = (title: string, body: string) =>
  `<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`;

async function listen(server: Server, host: string): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

async function startInternal(host: string, servers: Server[]): Promise<InternalService> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html' });
    response.end(page('Internal admin', `<h1>Admin console</h1><p>${SECRET}</p>`));
  });
  const service: InternalService = { url: '', connections: 0 };
  server.on('connection', () => service.connections++);
  servers.push(server);
  service.url = await listen(server, host);
  return service;
}

/** This host's first non-loopback IPv4 address and its interface (CI machines and containers have one). */
export function ownAddress(): { name: string; address: string } | undefined {
  for (const [name, entries] of Object.entries(os.networkInterfaces())) {
    const entry = entries?.find((candidate) => !candidate.internal && candidate.family === 'IPv4');
    if (entry) return { name, address: entry.address };
  }
  return undefined;
}

function redirectPath(to: string, hops = 1): string {
  return `/redirect?${new URLSearchParams({ to, hops: String(hops) })}`;
}

export const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

async function internalTargets(servers: Server[]): Promise<InternalTarget[]> {
  const unless = '; these are refused unless web\\.allow_private is true';
  const loopback = await startInternal('127.0.0.1', servers);
  const ipv6 = await startInternal('::1', servers);
  const port = new URL(loopback.url).port;
  const targets: InternalTarget[] = [
    {
      name: '127.0.0.1',
      url: `${loopback.url}/secret`,
      reason: new RegExp(`127\\.0\\.0\\.1 is a loopback address \\(127\\.0\\.0\\.0/8\\)${unless}`),
      service: loopback,
    },
    {
      name: '[::1]',
      url: `${ipv6.url}/secret`,
      reason: new RegExp(`::1 is a loopback address \\(::1/128\\)${unless}`),
      service: ipv6,
    },
    {
      name: 'localhost',
      url: `http://localhost:${port}/secret`,
      reason: new RegExp(`localhost resolves to (127\\.0\\.0\\.1|::1), a loopback address .*${unless}`),
      service: loopback,
    },
    {
      name: '169.254.169.254',
      url: 'http://169.254.169.254/latest/meta-data/',
      reason: new RegExp(`169\\.254\\.169\\.254 is a link-local address \\(169\\.254\\.0\\.0/16\\)${unless}`),
    },
  ];
  const own = ownAddress();
  if (own) {
    const service = await startInternal(own.address, servers);
    targets.push({
      name: `this host's ${own.name} address`,
      url: `${service.url}/secret`,
      reason: new RegExp(
        `${escapeRegExp(own.address)} is this host's own address \\(interface ${own.name}\\)${unless}`,
      ),
      service,
    });
  }
  return targets;
}

export async function startAttackSite(): Promise<AttackSite> {
  const servers: Server[] = [];
  const hits: string[] = [];
  const site = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://site');
    hits.push(url.pathname);
    const to = url.searchParams.get('to') ?? '/';
    const hops = Number(url.searchParams.get('hops') ?? 1);
    if (url.pathname === '/redirect') {
      const next = hops > 1 ? redirectPath(to, hops - 1) : to;
      response.writeHead(302, { location: next });
      return void response.end();
    }
    response.writeHead(200, { 'content-type': 'text/html' });
    if (url.pathname === '/image')
      return void response.end(page('Gallery', `<h1>Gallery</h1><img src="${redirectPath(to)}" alt="picture">`));
    if (url.pathname === '/links')
      return void response.end(page('Links', `<h1>Links</h1><a href="${redirectPath(to)}">Quarterly report</a>`));
    if (url.pathname === '/socket') {
      const script = `const socket = new WebSocket(${JSON.stringify(to)}); socket.onclose = () => { document.title = 'Socket closed'; };`;
      return void response.end(page('Live', `<h1>Live</h1><script>${script}</script>`));
    }
    response.end(page('Public page', '<h1>Public page</h1><p>Nothing to see.</p>'));
  });
  servers.push(site);
  const base = await listen(site, '127.0.0.1');
  const targets = await internalTargets(servers);
  return {
    url: base,
    redirect: (to, hops) => `${base}${redirectPath(to, hops)}`,
    imagePage: (to) => `${base}/image?${new URLSearchParams({ to })}`,
    linkPage: (to) => `${base}/links?${new URLSearchParams({ to })}`,
    socketPage: (to) => `${base}/socket?${new URLSearchParams({ to })}`,
    targets,
    hits,
    close: async () => {
      await Promise.all(
        servers.map(
          (server) =>
            new Promise<void>((resolve) => {
              server.closeAllConnections();
              server.close(() => resolve());
            }),
        ),
      );
    },
  };
}
