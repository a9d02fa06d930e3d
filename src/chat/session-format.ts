import { toShareGpt } from '../trajectory/sharegpt.js';
import type { Message, ToolSpec } from '../model/messages.js';
import type { ForkOrigin, Session } from './session.js';
import type { SearchHit, SessionSummary } from './session-store.js';
import { oneLine, type Style } from './style.js';

export const EXPORT_FORMATS = ['messages', 'sharegpt'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export function forkLabel(origin: ForkOrigin): string {
  return `fork of ${origin.run} ${origin.key}${origin.sample ? `:${origin.sample}` : ''} @ turn ${origin.turn}/${origin.turns}`;
}

/** One line per session: id, last update, model, message count, title (or first user message), fork origin. */
export function formatSessionList(sessions: readonly SessionSummary[], style: Style): string {
  if (sessions.length === 0) return 'no chat sessions yet';
  return sessions
    .map((session) => {
      const label = session.title ?? (session.preview ? oneLine(session.preview, 60) : '(no messages)');
      const fork = session.forked_from ? style.dim(`  [${forkLabel(session.forked_from)}]`) : '';
      return `${style.cyan(session.id)}  ${session.updated_at.slice(0, 16).replace('T', ' ')}  ${session.model}  ${String(session.message_count).padStart(3)} msgs  ${label}${fork}`;
    })
    .join('\n');
}

export function formatSearchHits(hits: readonly SearchHit[], style: Style): string {
  if (hits.length === 0) return 'no matches';
  return hits
    .map((hit) => `${style.cyan(hit.session_id)} #${hit.position} ${hit.role}: ${oneLine(hit.snippet, 200)}`)
    .join('\n');
}

/**
 * A session as one JSON value: `messages` keeps the exact OpenAI messages (with the tools
 * offered); `sharegpt` is the Hermes-compatible ShareGPT view that batch records carry.
 */
export function exportSession(
  session: Pick<Session, 'id' | 'model' | 'toolsets' | 'forked_from'> & {
    tools: ToolSpec[];
    messages: readonly Message[];
  },
  format: ExportFormat,
): Record<string, unknown> {
  const head = { id: session.id, model: session.model, toolsets: session.toolsets, forked_from: session.forked_from };
  if (format === 'sharegpt') return { ...head, conversations: toShareGpt(session.messages, session.tools) };
  return { ...head, tools: session.tools, messages: session.messages };
}
