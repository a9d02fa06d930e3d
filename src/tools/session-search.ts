import { z } from 'zod';
import { defineTool } from './tool.js';
import { ToolFailure } from './tool-failure.js';

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

const SEARCH_MAX_SESSIONS = 10;

export const SessionSearchParameters = z.object({
  query: z
    .string()
    .optional()
    .describe(
      'Search query (discovery shape). Keywords, phrases, or boolean expressions to find in past sessions. Omit to browse recent sessions. Ignored when session_id + around_message_id are set (scroll shape).',
    ),
  limit: z
    .number()
    .int()
    .default(3)
    .describe(
      'Discovery shape only. Max sessions to return (default 3, max 10). Bump to 5–10 when the topic likely spans several sessions and you want to pick the right one to scroll into.',
    ),
  sort: z
    .enum(['newest', 'oldest'])
    .optional()
    .describe(
      'Discovery shape only. Temporal bias on top of FTS5 ranking. Omit to keep relevance-only ordering (suitable for exploratory recall — "what do we know about X"). Set \'newest\' for recency-shaped questions ("where did we leave X"). Set \'oldest\' for origin-shaped questions ("how did X start"). Ignored in scroll and browse shapes.',
    ),
  session_id: z
    .string()
    .optional()
    .describe(
      'Scroll shape. Session to read inside. Use the session_id returned from a prior discovery call. Must be paired with around_message_id.',
    ),
  around_message_id: z
    .number()
    .int()
    .optional()
    .describe(
      "Scroll shape. Message id to center the window on. From a discovery result use match_message_id, or any id seen in a prior window. To scroll forward pass the last window message's id; to scroll backward pass the first.",
    ),
  window: z
    .number()
    .int()
    .default(5)
    .describe(
      'Scroll shape only. Messages to return on each side of the anchor (anchor itself always included). Clamped to [1, 20]. Default 5.',
    ),
  role_filter: z
    .string()
    .optional()
    .describe(
      "Optional. Comma-separated roles to include. Discovery defaults to 'user,assistant' (tool output is usually noise). Pass 'user,assistant,tool' to include tool output (debugging tool behaviour) or 'tool' to search tool output only.",
    ),
  profile: z
    .string()
    .optional()
    .describe(
      "Optional. Read sessions from another Hermes profile's database (read-only). Use when resolving an `@session:<profile>/<id>` link: pass the profile segment here with session_id as the id segment. Omit to use the current profile.",
    ),
});
type SessionSearchArguments = z.infer<typeof SessionSearchParameters>;

/** What this store cannot do of what the call asked, said in the result instead of refusing it. */
function limits(args: SessionSearchArguments): string[] {
  const notes: string[] = [];
  if (args.session_id !== undefined || args.around_message_id !== undefined)
    notes.push(
      'scrolling inside a session (session_id, around_message_id, window) is not available here; the matches show each hit in context',
    );
  if (args.profile !== undefined) notes.push('profile: there is one session store here; it was searched');
  if (args.limit > SEARCH_MAX_SESSIONS) notes.push(`limit capped at ${SEARCH_MAX_SESSIONS}`);
  return notes;
}

function roleFilter(args: SessionSearchArguments): Set<string> {
  const roles = (args.role_filter ?? 'user,assistant')
    .split(',')
    .map((role) => role.trim())
    .filter(Boolean);
  return new Set(roles);
}

export const sessionSearchTool = defineTool({
  name: 'session_search',
  toolset: 'session_search',
  version: '2',
  // Hermes' words, as hermes-agent sends them (tests/fixtures/hermes/tool-schemas.json).
  description:
    'Search past sessions stored in the local session DB, or scroll inside one. FTS5-backed retrieval over the SQLite message store. No LLM calls — every shape returns actual messages from the DB.\n\nSOURCE-FIRST LIMIT\n\n  This tool searches Hermes conversation history only. It is not evidence about the current contents of external sources. If the user provided a direct source such as a URL, phone number/contact, app/thread, file path, account, website, or live system, inspect that original source before or instead of session_search when accessible. Use session_search as secondary context for what was previously said, not as primary proof of what the source currently contains. If the original source is inaccessible, say so and why before falling back to session history. Do not conclude \'not found\' or \'no prior correspondence\' from session_search alone when a direct source was provided.\n\nFOUR CALLING SHAPES\n\n  1) DISCOVERY — pass `query`:\n     session_search(query="auth refactor", limit=3)\n     Runs FTS5, dedupes hits by session lineage, returns the top N sessions. Each result carries:\n       - session_id, title, when, source\n       - snippet: FTS5-highlighted match excerpt\n       - bookend_start: first 3 user+assistant messages of the session (the goal / kickoff)\n       - messages: ±5 messages around the FTS5 match, with the anchor message flagged (the hit in context)\n       - bookend_end: last 3 user+assistant messages of the session (the resolution / decisions)\n       - match_message_id, messages_before, messages_after\n     Bookends + window together let you reconstruct goal → match → resolution without paying for the whole transcript.\n\n  2) SCROLL — pass `session_id` + `around_message_id`:\n     session_search(session_id="...", around_message_id=12345, window=10)\n     Returns a window of ±`window` messages centered on the anchor. No FTS5, no bookends — just the slice. Use after a discovery call when you need more context than the ±5 default window.\n       - To scroll FORWARD: pass messages[-1].id back as around_message_id.\n       - To scroll BACKWARD: pass messages[0].id back as around_message_id.\n       - The boundary message appears in both windows — orientation marker.\n       - When messages_before or messages_after is < window, you\'re at the start or end of the session.\n\n  3) READ — pass `session_id` only (no around_message_id):\n     session_search(session_id="...", profile="work")\n     Dumps the whole session by id (first 20 + last 10 messages when large). This is how you resolve an `@session:<profile>/<id>` link the user dropped into the chat: split the value on `/` into profile + id and call session_search(session_id=id, profile=profile).\n\n  4) BROWSE — no args:\n     session_search()\n     Returns recent sessions chronologically: titles, previews, timestamps. Use when the user asks "what was I working on" without naming a topic.\n\nFTS5 SYNTAX\n\n  AND is the default — multi-word queries require all terms. Use OR explicitly for broader recall (`alpha OR beta OR gamma`), quoted phrases for exact match (`"docker networking"`), boolean (`python NOT java`), or prefix wildcards (`deploy*`).\n\nWHEN TO USE\n\n  Reach for this on questions about Hermes conversation history itself, such as "what did we do about X", "where did we leave Y", or "find the session where Z". If the user provided a direct source identifier, inspect that source first when accessible; session_search can then supply historical context. The session DB carries what was said when; external tools show current source/world state.',
  parameters: SessionSearchParameters,
  run: (args, { state }) => {
    const search = state.get(SESSION_SEARCH_STATE_KEY) as SessionSearch | undefined;
    if (typeof search !== 'function') throw new ToolFailure('there are no past sessions to search in this run');
    const notes = limits(args);
    const query = args.query?.trim() ?? '';
    if (query === '')
      return { query, matches: [], notes: [...notes, 'browsing without a query is not available here; pass query'] };
    const limit = Math.max(1, Math.min(args.limit, SEARCH_MAX_SESSIONS));
    const roles = roleFilter(args);
    let hits = search(query, limit * 5).filter((hit) => roles.has(hit.role));
    if (args.sort)
      hits = [...hits].sort((a, b) => (args.sort === 'newest' ? -1 : 1) * a.updated_at.localeCompare(b.updated_at));
    hits = hits.slice(0, limit);
    if (hits.length === 0) notes.push('nothing found; try fewer or other words');
    return { query, matches: hits, ...(notes.length > 0 ? { notes } : {}) };
  },
});
