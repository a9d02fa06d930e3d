import type { SearchBackendName, WebConfig } from '../../config/web.js';

/** One search hit as the model sees it. */
export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
}

interface Backend {
  /** The environment variable that configures it (an API key, or SearXNG's URL). */
  variable: string;
  defaultBaseUrl?: string;
  /** Overrides the base URL (tests point it at a stand-in). */
  baseUrlVariable: string;
  search(input: {
    query: string;
    limit: number;
    baseUrl: string;
    key: string;
    signal: AbortSignal;
  }): Promise<SearchResult[]>;
}

/** Each backend speaks its documented HTTP API; none needs more than one request. */
const BACKENDS: Record<SearchBackendName, Backend> = {
  searxng: {
    variable: 'TRAJ_SEARXNG_URL',
    baseUrlVariable: 'TRAJ_SEARXNG_URL',
    async search({ query, limit, baseUrl, signal }) {
      const url = new URL('search', withSlash(baseUrl));
      url.searchParams.set('q', query);
      url.searchParams.set('format', 'json');
      const body = (await getJson(url, { accept: 'application/json' }, signal)) as {
        results?: Array<{ title?: string; url?: string; content?: string }>;
      };
      return (body.results ?? []).slice(0, limit).map((hit) => result(hit.title, hit.url, hit.content));
    },
  },
  brave: {
    variable: 'BRAVE_API_KEY',
    defaultBaseUrl: 'https://api.search.brave.com/res/v1',
    baseUrlVariable: 'TRAJ_BRAVE_URL',
    async search({ query, limit, baseUrl, key, signal }) {
      const url = new URL('web/search', withSlash(baseUrl));
      url.searchParams.set('q', query);
      url.searchParams.set('count', String(limit));
      const body = (await getJson(url, { accept: 'application/json', 'x-subscription-token': key }, signal)) as {
        web?: { results?: Array<{ title?: string; url?: string; description?: string }> };
      };
      return (body.web?.results ?? []).slice(0, limit).map((hit) => result(hit.title, hit.url, hit.description));
    },
  },
  tavily: {
    variable: 'TAVILY_API_KEY',
    defaultBaseUrl: 'https://api.tavily.com',
    baseUrlVariable: 'TRAJ_TAVILY_URL',
    async search({ query, limit, baseUrl, key, signal }) {
      const body = (await postJson(
        new URL('search', withSlash(baseUrl)),
        { query, max_results: limit },
        key,
        signal,
      )) as {
        results?: Array<{ title?: string; url?: string; content?: string }>;
      };
      return (body.results ?? []).slice(0, limit).map((hit) => result(hit.title, hit.url, hit.content));
    },
  },
  firecrawl: {
    variable: 'FIRECRAWL_API_KEY',
    defaultBaseUrl: 'https://api.firecrawl.dev',
    baseUrlVariable: 'TRAJ_FIRECRAWL_URL',
    async search({ query, limit, baseUrl, key, signal }) {
      const body = (await postJson(new URL('v2/search', withSlash(baseUrl)), { query, limit }, key, signal)) as {
        success?: boolean;
        error?: string;
        data?:
          | { web?: Array<{ title?: string; url?: string; description?: string }> }
          | Array<{ title?: string; url?: string; description?: string }>;
      };
      if (body.success === false) throw new Error(`firecrawl: ${body.error ?? 'the search failed'}`);
      // v2 answers { data: { web: [...] } }; v1 answered { data: [...] }.
      const hits = Array.isArray(body.data) ? body.data : (body.data?.web ?? []);
      return hits.slice(0, limit).map((hit) => result(hit.title, hit.url, hit.description));
    },
  },
};

export const BACKEND_ORDER: readonly SearchBackendName[] = ['searxng', 'brave', 'tavily', 'firecrawl'];

/** The backend in use and how to reach it, or why none can be used. */
export type ResolvedBackend = { name: SearchBackendName; baseUrl: string; key: string } | { missing: string };

export function resolveSearchBackend(web: WebConfig, env: NodeJS.ProcessEnv): ResolvedBackend {
  const configured = web.search.backend;
  const candidates = configured ? [configured] : BACKEND_ORDER;
  for (const name of candidates) {
    const backend = BACKENDS[name];
    const value = env[backend.variable];
    if (!value && !(name === 'searxng' && web.search.base_url && configured)) continue;
    const baseUrl =
      (configured ? web.search.base_url : undefined) ?? env[backend.baseUrlVariable] ?? backend.defaultBaseUrl;
    if (!baseUrl) continue;
    return { name, baseUrl, key: name === 'searxng' ? '' : (value ?? '') };
  }
  if (configured) {
    const backend = BACKENDS[configured];
    return {
      missing: `web.search.backend is ${configured} but ${backend.variable} is not set${configured === 'searxng' ? ' (nor web.search.base_url)' : ''}`,
    };
  }
  return {
    missing: `no search backend configured: set TRAJ_SEARXNG_URL, BRAVE_API_KEY, TAVILY_API_KEY or FIRECRAWL_API_KEY (or web.search in the config)`,
  };
}

export async function searchWith(
  resolved: { name: SearchBackendName; baseUrl: string; key: string },
  query: string,
  limit: number,
  signal: AbortSignal,
): Promise<SearchResult[]> {
  return BACKENDS[resolved.name].search({ query, limit, baseUrl: resolved.baseUrl, key: resolved.key, signal });
}

function result(title: string | undefined, url: string | undefined, snippet: string | undefined): SearchResult {
  return { title: title ?? '', url: url ?? '', snippet: (snippet ?? '').replace(/<[^>]+>/g, '') };
}

function withSlash(url: string): string {
  return url.endsWith('/') ? url : `${url}/`;
}

async function getJson(url: URL, headers: Record<string, string>, signal: AbortSignal): Promise<unknown> {
  return answer(await fetch(url, { headers, signal }), url);
}

async function postJson(url: URL, body: unknown, key: string, signal: AbortSignal): Promise<unknown> {
  const headers = { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${key}` };
  return answer(await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal }), url);
}

async function answer(response: Response, url: URL): Promise<unknown> {
  const text = await response.text();
  if (!response.ok)
    throw new Error(
      `search backend answered HTTP ${response.status} at ${url.origin}${url.pathname}: ${text.slice(0, 300)}`,
    );
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(
      `search backend at ${url.origin}${url.pathname} answered something that is not JSON: ${text.slice(0, 200)}`,
    );
  }
}
