import { z } from 'zod';
import { defineTool, ToolFailure } from './registry.js';

export interface PastSessionHit {
  session: string;
  title: string | null;
  updated_at: string;
  role: string;
  snippet: string;
}

/** Searches past conversations; chat puts one in ToolContext.state under this key (the store lives above tools/). */
export type SessionSearch = (query: string, limit: number) => PastSessionHit[];
export const SESSION_SEARCH_STATE_KEY = 'session_search';

export const sessionSearchTool = defineTool({
  name: 'session_search',
  toolset: 'session_search',
  version: '1',
  description:
    'Full-text search over past chat sessions: finds what was said or done before. Words all must match; "quoted phrase" and prefix* work.',
  parameters: z.object({
    query: z.string().min(1).describe('words to find'),
    limit: z.number().int().min(1).max(20).default(5).describe('how many matches'),
  }),
  run: ({ query, limit }, { state }) => {
    const search = state.get(SESSION_SEARCH_STATE_KEY) as SessionSearch | undefined;
    if (typeof search !== 'function') throw new ToolFailure('there are no past sessions to search in this run');
    const hits = search(query, limit);
    return hits.length === 0
      ? { query, matches: [], note: 'nothing found; try fewer or other words' }
      : { query, matches: hits };
  },
});
