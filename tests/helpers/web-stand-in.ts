import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TINY_PNG_BASE64 } from '../../src/testing/index.js';

/** An article page wrapped in navigation, ads and a footer, as real sites are. */
export const ARTICLE_HTML = `<!doctype html>
<html><head><title>Tidal Power in the Bay of Fundy | Coastal News</title></head>
<body>
<header><nav><a href="/">Home</a> | <a href="/weather">Weather</a> | <a href="/sports">Sports</a> | <a href="/login">Subscribe now</a></nav></header>
<div class="ad">BUY ONE GET ONE FREE: garden gnomes at Gnome Depot</div>
<main><article>
<h1>Tidal Power in the Bay of Fundy</h1>
<p>The Bay of Fundy has the highest tides in the world, rising as much as sixteen metres twice a day.
Engineers have spent decades trying to turn that motion into electricity without harming the fish that migrate through the bay.</p>
<p>In 2024 a new turbine array began feeding the Nova Scotia grid, producing enough power for about 2,500 homes.
The array sits on the sea floor and turns slowly, which the project says lets fish pass safely.</p>
<h2>What comes next</h2>
<p>Regulators will review two years of monitoring data before allowing the array to grow.
If the data hold up, the operators plan to add twenty more turbines by 2030.</p>
</article></main>
<aside><h3>Trending</h3><ul><li>Ten celebrity sandwiches</li><li>Local cat elected mayor</li></ul></aside>
<footer><p>Copyright 2026 Coastal News. All rights reserved. Privacy | Terms | Cookie settings</p></footer>
</body></html>`;

/** A one-page PDF with the given lines of text (Helvetica), built by hand: no PDF library involved. */
export function makePdf(lines: string[]): Buffer {
  const text = lines
    .map((line, index) => `BT /F1 12 Tf 72 ${720 - index * 16} Td (${line.replace(/[()\\]/g, '\\$&')}) Tj ET`)
    .join('\n');
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${Buffer.byteLength(text)} >>\nstream\n${text}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, index) => {
    offsets.push(Buffer.byteLength(out));
    out += `${index + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out);
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

export const PDF_LINES = ['Quarterly report of the Fundy Tidal Array', 'Output in the third quarter: 4.2 GWh.'];

export interface WebStandIn {
  /** http://127.0.0.1:PORT */
  url: string;
  /** Requests per path (query string excluded). */
  hits: Map<string, number>;
  /** Bytes of the 20 MB page written before the client closed (or the page ended), per request. */
  hugeBytesWritten: number[];
  /** The headers and bodies the search stand-ins received. */
  searches: Array<{ backend: string; headers: IncomingMessage['headers']; query: string; body: unknown }>;
  close(): Promise<void>;
}

const SEARCH_HITS = [
  {
    title: 'Tidal Power in the Bay of Fundy',
    path: '/article',
    snippet: 'The Bay of Fundy has the highest tides in the world.',
  },
  {
    title: 'Fundy Tidal Array quarterly report',
    path: '/report.pdf',
    snippet: 'Output in the third quarter: 4.2 GWh.',
  },
];

/**
 * One real HTTP server on 127.0.0.1 for web tool tests: pages (article, PDF, redirects, 404, a
 * page that never answers, a 20 MB page, an image) and stand-ins of the four search backends,
 * each answering in its documented response format.
 */
export async function startWebStandIn(): Promise<WebStandIn> {
  const hits = new Map<string, number>();
  const searches: WebStandIn['searches'] = [];
  const hugeBytesWritten: number[] = [];
  const hanging = new Set<ServerResponse>();
  let base = '';
  const results = () => SEARCH_HITS.map((hit) => ({ ...hit, url: `${base}${hit.path}` }));

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', base);
    hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
    const body = await readBody(request);
    const json = (status: number, value: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(value));
    };
    switch (url.pathname) {
      case '/article':
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        return response.end(ARTICLE_HTML);
      case '/report.pdf':
        response.writeHead(200, { 'content-type': 'application/pdf' });
        return response.end(makePdf(PDF_LINES));
      case '/notes.txt':
        response.writeHead(200, { 'content-type': 'text/plain' });
        return response.end('plain notes: bring a tide table');
      case '/image.png':
        response.writeHead(200, { 'content-type': 'image/png' });
        return response.end(Buffer.from(TINY_PNG_BASE64, 'base64'));
      case '/archive.zip':
        response.writeHead(200, { 'content-type': 'application/zip' });
        return response.end(Buffer.from('PK\u0003\u0004 not really a zip'));
      case '/hang':
        hanging.add(response);
        return; // never answers
      case '/huge': {
        response.writeHead(200, { 'content-type': 'text/html' });
        const chunk = `<p>${'filler text '.repeat(850)}</p>\n`; // ~10 KB
        let sent = 0;
        const write = () => {
          while (sent < 20_000_000) {
            if (response.destroyed) return;
            sent += chunk.length;
            if (!response.write(chunk)) return void response.once('drain', write);
          }
          response.end();
        };
        response.on('error', () => undefined);
        response.once('close', () => hugeBytesWritten.push(sent));
        return write();
      }
      case '/loop':
        response.writeHead(302, { location: '/loop' });
        return response.end();
      case '/to-localhost':
        response.writeHead(302, { location: `http://localhost:${new URL(base).port}/article` });
        return response.end();
      case '/searxng/search':
        searches.push({
          backend: 'searxng',
          headers: request.headers,
          query: url.searchParams.get('q') ?? '',
          body: null,
        });
        if (url.searchParams.get('format') !== 'json') return json(403, { error: 'format not allowed' });
        return json(200, {
          query: url.searchParams.get('q'),
          number_of_results: 2,
          results: results().map((hit, index) => ({
            url: hit.url,
            title: hit.title,
            content: hit.snippet,
            engine: 'duckduckgo',
            score: 2 - index,
            category: 'general',
          })),
          answers: [],
          suggestions: [],
          unresponsive_engines: [],
        });
      case '/brave/res/v1/web/search':
        searches.push({
          backend: 'brave',
          headers: request.headers,
          query: url.searchParams.get('q') ?? '',
          body: null,
        });
        if (request.headers['x-subscription-token'] !== 'brave-test-key')
          return json(401, { type: 'ErrorResponse', error: { code: 'SUBSCRIPTION_TOKEN_INVALID', status: 401 } });
        return json(200, {
          type: 'search',
          query: { original: url.searchParams.get('q') },
          web: {
            type: 'search',
            results: results().map((hit) => ({
              type: 'search_result',
              title: hit.title,
              url: hit.url,
              description: `<strong>${hit.snippet}</strong>`,
              language: 'en',
            })),
          },
        });
      case '/tavily/search':
        searches.push({
          backend: 'tavily',
          headers: request.headers,
          query: (JSON.parse(body || '{}') as { query?: string }).query ?? '',
          body: JSON.parse(body || '{}'),
        });
        if (request.headers.authorization !== 'Bearer tvly-test-key')
          return json(401, { detail: { error: 'Unauthorized: missing or invalid API key.' } });
        return json(200, {
          query: JSON.parse(body).query,
          answer: null,
          images: [],
          results: results().map((hit, index) => ({
            title: hit.title,
            url: hit.url,
            content: hit.snippet,
            score: 0.9 - index / 10,
            raw_content: null,
          })),
          response_time: 0.4,
        });
      case '/firecrawl/v2/search':
        searches.push({
          backend: 'firecrawl',
          headers: request.headers,
          query: (JSON.parse(body || '{}') as { query?: string }).query ?? '',
          body: JSON.parse(body || '{}'),
        });
        if (request.headers.authorization !== 'Bearer fc-test-key')
          return json(401, { success: false, error: 'Unauthorized: Invalid token' });
        return json(200, {
          success: true,
          data: {
            web: results().map((hit, index) => ({
              url: hit.url,
              title: hit.title,
              description: hit.snippet,
              position: index + 1,
            })),
          },
        });
      default: {
        const hop = /^\/r(\d)$/.exec(url.pathname);
        if (hop) {
          const next = Number(hop[1]) > 1 ? `/r${Number(hop[1]) - 1}` : '/article';
          response.writeHead(301, { location: next });
          return response.end();
        }
        response.writeHead(404, { 'content-type': 'text/html' });
        return response.end('<html><body><h1>Not found</h1></body></html>');
      }
    }
  };
  const server = createServer((request, response) => void handle(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    hits,
    searches,
    hugeBytesWritten,
    close: () =>
      new Promise<void>((resolve) => {
        for (const response of hanging) response.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString()));
    request.on('end', () => resolve(text));
  });
}
