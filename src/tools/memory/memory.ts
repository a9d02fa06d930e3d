import { z } from 'zod';
import { defineTool, type ToolContext } from '../tool.js';
import { ToolFailure } from '../tool-failure.js';
import { MEMORY_STATE_KEY, MEMORY_TARGETS, MemoryStore } from './memory-store.js';

export const MemoryParameters = z.object({
  action: z
    .enum(['add', 'replace', 'remove'])
    .optional()
    .describe("The action to perform (single-op shape). Omit when using 'operations'."),
  target: z
    .enum(['memory', 'user'])
    .describe("Which memory store: 'memory' for personal notes, 'user' for user profile."),
  content: z.string().optional().describe("The entry content. Required for 'add' and 'replace' (single-op shape)."),
  old_text: z
    .string()
    .optional()
    .describe(
      "REQUIRED for 'replace' and 'remove' (single-op shape): a short unique substring identifying the existing entry to modify. Omit only for 'add'.",
    ),
  operations: z
    .array(
      z.object({
        action: z.enum(['add', 'replace', 'remove']),
        content: z.string().optional().describe('Entry content for add/replace.'),
        old_text: z.string().optional().describe('Substring identifying the entry for replace/remove.'),
      }),
    )
    .optional()
    .describe(
      'Batch shape: a list of operations applied atomically in one call against the final char budget. Preferred when making multiple changes or consolidating to make room. Each item is {action, content?, old_text?}.',
    ),
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
  version: '2',
  // Hermes' words, as hermes-agent sends them (tests/fixtures/hermes/tool-schemas.json).
  description:
    "Save durable facts to persistent memory that survive across sessions. Memory is injected into every future turn, so keep entries compact and high-signal.\n\nHOW: make ALL your changes in ONE call via an 'operations' array (each item: {action, content?, old_text?}). The batch applies atomically and the char limit is checked only on the FINAL result — so a single call can remove/replace stale entries to free room AND add new ones, even when an add alone would overflow. The response reports current/limit chars and confirms completion; one batch call finishes the update, so don't repeat it. Use the bare action/content/old_text fields only for a single lone change.\n\nWHEN: save proactively when the user states a preference, correction, or personal detail, or you learn a stable fact about their environment, conventions, or workflow. Priority: user preferences & corrections > environment facts > procedures. The best memory stops the user repeating themselves.\n\nIF FULL: an add is rejected with the current entries shown. Reissue as ONE batch that removes or shortens enough stale entries and adds the new one together.\n\nTARGETS: 'user' = who the user is (name, role, preferences, style). 'memory' = your notes (environment, conventions, tool quirks, lessons).\n\nSKIP: trivial/obvious info, easily re-discovered facts, raw data dumps, task progress, completed-work logs, temporary TODO state (use session_search for those). Reusable procedures belong in a skill, not memory.",
  parameters: MemoryParameters,
  run: ({ action, target, content, old_text, operations }, { state }) => {
    const store = storeOf(state);
    if (operations !== undefined && action !== undefined)
      throw new ToolFailure('pass either operations or action, not both', 'put every change in operations');
    const batch = operations ?? (action === undefined ? [] : [{ action, content, old_text }]);
    if (batch.length === 0) throw new ToolFailure('nothing to do', 'pass operations (or action with content/old_text)');
    const entries = store.applyAll(target, batch);
    const used = entries.join('\n§\n').length;
    return {
      success: true,
      target,
      entries,
      used_chars: used,
      limit_chars: MEMORY_TARGETS[target].limit,
      operations: batch.length,
    };
  },
});
