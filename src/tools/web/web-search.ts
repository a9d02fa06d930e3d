import { z } from 'zod';
import { DEFAULT_WEB_CONFIG } from '../../config/web.js';
import { defineTool, ToolFailure } from '../registry.js';
import { resolveSearchBackend, searchWith, type SearchResult } from './search-backends.js';

export const WebSearchParameters = z.object({
  query: z.string().min(1).describe('What to search the web for.'),
  limit: z.number().int().min(1).max(20).optional().describe('How many results (default 5, at most 20).'),
});

export const webSearchTool = defineTool({
  name: 'web_search',
  toolset: 'web',
  version: '1',
  description:
    'Search the web. Returns ranked results, each with title, url and snippet. ' +
    'Read a result in full with web_extract.',
  parameters: WebSearchParameters,
  available: ({ env, services }) => {
    const resolved = resolveSearchBackend(services?.settings.web ?? DEFAULT_WEB_CONFIG, env);
    return 'missing' in resolved ? resolved.missing : true;
  },
  run: async ({ query, limit }, { env, services, signal }) => {
    const web = services?.settings.web ?? DEFAULT_WEB_CONFIG;
    const resolved = resolveSearchBackend(web, env);
    if ('missing' in resolved) throw new ToolFailure(resolved.missing);
    const count = limit ?? web.search.limit;
    const key = `search:${resolved.name}:${count}:${query}`;
    const cache = services?.webCache;
    const cached = cache?.get(key) as SearchResult[] | undefined;
    if (cached) {
      cache!.counts.hits++;
      return { query, backend: resolved.name, results: cached };
    }
    let results: SearchResult[];
    try {
      if (cache) cache.counts.fetches++;
      results = await searchWith(
        resolved,
        query,
        count,
        AbortSignal.any([signal, AbortSignal.timeout(web.search.timeout_ms)]),
      );
    } catch (error) {
      if (signal.aborted) throw error;
      throw new ToolFailure(`web search failed: ${(error as Error).message}`, 'try again, or rephrase the query');
    }
    cache?.put(key, results);
    return { query, backend: resolved.name, results };
  },
});
