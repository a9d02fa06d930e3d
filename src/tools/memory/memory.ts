import { z } from 'zod';
import { defineTool, ToolFailure, type ToolContext } from '../registry.js';
import { MEMORY_STATE_KEY, MEMORY_TARGETS, MemoryStore, type MemoryTarget } from './memory-store.js';

export const MemoryParameters = z.object({
  action: z.enum(['add', 'replace', 'remove']).describe('add a new entry, replace one, or remove one'),
  target: z
    .enum(['memory', 'user'])
    .default('memory')
    .describe('memory: your own notes; user: what you learned about the user'),
  content: z.string().optional().describe('the entry to add, or the new text for replace'),
  old_text: z.string().optional().describe('replace/remove: a piece of the one entry to change'),
});

function storeOf(state: ToolContext['state']): MemoryStore {
  const store = state.get(MEMORY_STATE_KEY);
  if (!(store instanceof MemoryStore))
    throw new ToolFailure('memory is not enabled in this run', 'carry on without it');
  return store;
}

export const memoryTool = defineTool({
  name: 'memory',
  toolset: 'memory',
  version: '1',
  description:
    `Remember things across sessions in two small files: your notes (target memory, ${MEMORY_TARGETS.memory.limit} characters) ` +
    `and the user profile (target user, ${MEMORY_TARGETS.user.limit} characters). Saved at once; shown in the system prompt of the ` +
    'next session. Keep entries short and factual: preferences, environment facts, lessons learned.',
  parameters: MemoryParameters,
  run: ({ action, target, content, old_text }, { state }) => {
    const store = storeOf(state);
    const need = (value: string | undefined, field: string) => {
      if (value === undefined) throw new ToolFailure(`${action} needs ${field}`);
      return value;
    };
    const entries =
      action === 'add'
        ? store.add(target as MemoryTarget, need(content, 'content'))
        : action === 'replace'
          ? store.replace(target as MemoryTarget, need(old_text, 'old_text'), need(content, 'content'))
          : store.remove(target as MemoryTarget, need(old_text, 'old_text'));
    const used = entries.join('\n§\n').length;
    return { target, entries, used_chars: used, limit_chars: MEMORY_TARGETS[target as MemoryTarget].limit };
  },
});
