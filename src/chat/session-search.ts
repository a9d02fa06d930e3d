import type { PastSessionHit, SessionSearch } from '../tools/session-search.js';
import type { SessionStore } from './session-store.js';

/**
 * The session_search tool's view of the store: a read of the FTS5 index, the asking session
 * itself left out (it already has its own messages).
 */
export function pastSessionSearch(store: SessionStore, currentSession: () => string): SessionSearch {
  return (query, limit) => {
    const current = currentSession();
    return store
      .search(query, { limit: limit + 50, mark: ['**', '**'] })
      .filter((hit) => hit.session_id !== current)
      .slice(0, limit)
      .map(
        (hit): PastSessionHit => ({
          session: hit.session_id,
          title: hit.title,
          updated_at: hit.updated_at,
          role: hit.role,
          snippet: hit.snippet,
        }),
      );
  };
}
