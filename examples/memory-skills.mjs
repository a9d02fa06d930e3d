// traj mock-server --script examples/memory-skills.mjs (docs/memory-skills.md): a model that
// saves what the user says about themselves, answers from the memory its system prompt carries,
// searches earlier sessions, and writes a skill, then reads it.
const SKILL = [
  '---',
  'name: git-bisect',
  'description: Find the commit that broke a test with git bisect run.',
  '---',
  '1. git bisect start BAD GOOD',
  '2. git bisect run <test command>',
  '3. git bisect reset',
  '',
].join('\n');

const call = (name, args) => ({ tool_calls: [{ name, arguments: args }] });

export default function script(request) {
  const messages = request.messages;
  if (messages.at(-1).role === 'tool') return { content: 'Done.' };
  const said = String(messages.findLast((message) => message.role === 'user').content);
  if (said.includes('never spaces'))
    return call('memory', { action: 'add', target: 'user', content: 'Indents with tabs, never spaces.' });
  if (said.includes('know about me')) {
    const system = String(messages[0].content);
    const profile = /## About the user[^\n]*\n([\s\S]*?)(\n\n|$)/.exec(system)?.[1] ?? '(nothing)';
    return { content: `From my memory: ${profile.replace(/^- /gm, '')}` };
  }
  if (said.includes('earlier talk')) return call('session_search', { query: 'tabs' });
  if (said.includes('Save a skill')) return call('skill_manage', { action: 'create', name: 'git-bisect', content: SKILL });
  if (said.includes('How do I bisect')) return call('skill_view', { name: 'git-bisect' });
  return { content: 'I have no script for that.' };
}
