import { z } from 'zod';
import { DEFAULT_WEB_CONFIG } from '../../config/web.js';
import { defineTool } from '../tool.js';
import { ToolFailure } from '../tool-failure.js';
import { resolveSearchBackend, searchWith, type SearchResult } from './search-backends.js';

export const WebSearchParameters = z.object({
  query: z
    .string()
    .describe(
      'The search query to look up on the web. You may include backend-supported operators such as site:example.com, filetype:pdf, intitle:word, -term, or "exact phrase".',
    ),
  // Hermes' default is 5; when omitted, traj's web.search.limit decides (5 unless configured).
  limit: z
    .number()
    .int()
    .min(1)
    .max(100)
    .optional()
    .meta({ default: 5 })
    .describe('Maximum number of results to return. Defaults to 5.'),
});

export const webSearchTool = defineTool({
  name: 'web_search',
  toolset: 'web',
  version: '2',
  // Hermes' words, as hermes-agent sends them (tests/fixtures/hermes/tool-schemas.json).
  description:
    'Search the web for information. Returns up to 5 results by default with titles, URLs, and descriptions. The query is passed through to the configured backend, so operators such as site:domain, filetype:pdf, intitle:word, -term, and "exact phrase" may work when the backend supports them.',
  parameters: WebSearchParameters,
  available: ({ env, services }) => {
    const resolved = resolveSearchBackend(services?.settings.web ?? DEFAULT_WEB_CONFIG, env);
    return 'missing' in resolved ? resolved.missing : true;
  },
  run: async ({ query, limit }, { env, services, signal }) => {
    if (query.trim() === '') throw new ToolFailure('query is empty', 'say what to search for');
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
