import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A tiny multi-page site on 127.0.0.1 for the browser tests: a login form, linked pages, a page
 * built by JavaScript, a page that never finishes loading, a cookie page and a download. Pages
 * stay small: Chromium is CPU-heavy and the machine is shared.
 */
export interface BrowserSite {
  url: string;
  /** Paths requested, in order (to prove a refused request never arrived). */
  hits: string[];
  close(): Promise<void>;
}

const page = (title: string, body: string) =>
  `<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`;

const PAGES: Record<string, string> = {
  '/': page(
    'Home',
    '<h1>Home</h1><nav><a href="/page/1">First page</a> <a href="/page/2">Second page</a></nav><p>Welcome to the test site.</p>',
  ),
  '/page/1': page(
    'Page one',
    '<h1>Page one</h1><p>The first page holds the word apple.</p><a href="/page/2">Next: second page</a>',
  ),
  '/page/2': page(
    'Page two',
    '<h1>Page two</h1><p>The second page holds the word banana.</p><a href="/">Back home</a>',
  ),
  '/login': page(
    'Sign in',
    '<h1>Sign in</h1><form action="/session" method="post"><label>User name <input name="user"></label>' +
      '<label>Password <input type="password" name="password"></label><button type="submit">Sign in</button></form>',
  ),
  '/script': page(
    'Built by script',
    '<div id="root"></div><script>setTimeout(() => { const b = document.createElement("button"); b.textContent = "Made by JavaScript"; ' +
      'b.onclick = () => { document.getElementById("root").insertAdjacentHTML("beforeend", "<p>Clicked " + (++window.n || (window.n = 1)) + " times</p>"); }; ' +
      'document.getElementById("root").append(b); }, 30);</script>',
  ),
  '/slow': page(
    'Still loading',
    '<h1>Partial page</h1><p>This text is here before the image arrives.</p><img src="/never" alt="never arrives">',
  ),
  '/images': page(
    'Pictures',
    '<img src="/pixel.png" alt="a red dot"><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" alt="inline">',
  ),
  '/download': page('Files', '<a href="/file.txt">Get the report</a>'),
  // The script spins only once clicked, so the page is whole for navigate's snapshot however slow the machine.
  '/busy': page('Busy', '<h1>Busy page</h1><button onclick="for (;;) {}">Spin forever</button>'),
  '/dialog': page('Alert', '<button onclick="alert(\'Hello from the page\')">Show alert</button>'),
  '/noisy': page(
    'Noisy',
    '<h1 id="title">Noisy page</h1><script>console.log("loaded " + 6 * 7); console.warn("careful");' +
      ' setTimeout(() => { throw new Error("boom from the page"); }, 0);</script>',
  ),
};

const PIXEL = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000'.concat(
    '1f15c4890000000d49444154789c63f8cfc0f01f0005000201e221bc330000000049454e44ae426082',
  ),
  'hex',
);

function cookie(request: IncomingMessage, name: string): string | undefined {
  return request.headers.cookie
    ?.split(/;\s*/)
    .find((part) => part.startsWith(`${name}=`))
    ?.slice(name.length + 1);
}

function handle(request: IncomingMessage, response: ServerResponse, url: URL): void {
  const html = (status: number, body: string, headers: Record<string, string> = {}) => {
    response.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers });
    response.end(body);
  };
  if (url.pathname === '/never') return; // never answered: the page's load event never fires
  if (url.pathname === '/session' && request.method === 'POST') {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const form = new URLSearchParams(body);
      if (form.get('password') !== 'secret')
        return html(200, page('Sign in failed', '<h1>Wrong password</h1><a href="/login">Try again</a>'));
      html(303, '', {
        location: '/account',
        'set-cookie': `user=${encodeURIComponent(form.get('user') ?? '')}; Path=/`,
      });
    });
    return;
  }
  if (url.pathname === '/account') {
    const user = cookie(request, 'user');
    return html(
      200,
      user
        ? page('Account', `<h1>Welcome, ${decodeURIComponent(user)}</h1><p>You are signed in.</p>`)
        : page('Account', '<h1>Not signed in</h1>'),
    );
  }
  if (url.pathname === '/set-cookie') {
    const value = url.searchParams.get('value') ?? 'x';
    return html(200, page('Cookie set', `<p>cookie set to ${value}</p>`), { 'set-cookie': `token=${value}; Path=/` });
  }
  if (url.pathname === '/embed') {
    // The same server under another name: a policy that denies 'localhost' must stop this image.
    const port = request.socket.localPort;
    return html(200, page('Embed', `<h1>Embed</h1><img src="http://localhost:${port}/pixel.png" alt="remote pixel">`));
  }
  if (url.pathname === '/show-cookie')
    return html(200, page('Cookie', `<p>token is ${cookie(request, 'token') ?? 'absent'}</p>`));
  if (url.pathname === '/pixel.png') {
    response.writeHead(200, { 'content-type': 'image/png' });
    return void response.end(PIXEL);
  }
  if (url.pathname === '/file.txt') {
    response.writeHead(200, {
      'content-type': 'text/plain',
      'content-disposition': 'attachment; filename="report.txt"',
    });
    return void response.end('quarterly numbers\n');
  }
  const known = PAGES[url.pathname];
  if (known) return html(200, known);
  html(404, page('Not found', '<h1>Not found</h1>'));
}

export async function startBrowserSite(): Promise<BrowserSite> {
  const hits: string[] = [];
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://site');
    hits.push(url.pathname);
    handle(request, response, url);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
