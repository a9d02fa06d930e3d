import type { Message } from '../model/messages.js';
import { conversationBlock, escapeHtml } from '../report/html-parts.js';
import { layout } from './layout.js';
import type { SessionListing } from './session-reader.js';
import { shellWord } from './trajectory-page.js';

/** One chat session, rendered like a trajectory, with the command that resumes it. */
export function sessionPage(session: SessionListing, messages: readonly Message[]): string {
  return layout(
    `traj view · session ${session.id}`,
    `<h1>${escapeHtml(session.title ?? 'chat session')} <small class="mono">${escapeHtml(session.id)}</small></h1>
<dl class="facts"><div><dt>model</dt><dd>${escapeHtml(session.model)}</dd></div><div><dt>toolsets</dt><dd>${escapeHtml(session.toolsets.join(', ') || '(none)')}</dd></div><div><dt>updated</dt><dd>${escapeHtml(session.updated_at)}</dd></div></dl>
<h2>Continue in chat</h2><pre class="fork" data-field="resume">${escapeHtml(`traj chat --resume ${shellWord(session.id)}`)}</pre>
<h2>Messages <small class="note">${messages.length}</small></h2>
${conversationBlock(messages)}`,
    [[`session ${session.id}`, null]],
  );
}
