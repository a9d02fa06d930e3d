import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomically } from '../../util/atomic-write.js';
import { ToolFailure } from '../tool-failure.js';
import { injectionReason } from './injection.js';

/** The two memory files: the agent's own notes and what it learned about the user. */
export const MEMORY_TARGETS = {
  memory: { file: 'MEMORY.md', limit: 2200, title: 'Your notes (memory)' },
  user: { file: 'USER.md', limit: 1375, title: 'About the user (user profile)' },
} as const;
export type MemoryTarget = keyof typeof MEMORY_TARGETS;

/** Entries are kept one per block, separated by this line, so replace and remove act on whole entries. */
const SEPARATOR = '\n§\n';

export interface MemoryState {
  memory: string[];
  user: string[];
}

/** Key of the store in ToolContext.state: chat and rollouts put one there when memory is on. */
export const MEMORY_STATE_KEY = 'memory';

/**
 * Bounded memory in a folder: every change is checked (limits, injection-looking text) and saved
 * at once. What the system prompt shows is a snapshot taken when a conversation starts, so a
 * change reaches the prompt in the next session and the prefix stays cacheable.
 */
export class MemoryStore {
  constructor(readonly folder: string) {
    mkdirSync(folder, { recursive: true });
  }

  read(target: MemoryTarget): string[] {
    const path = join(this.folder, MEMORY_TARGETS[target].file);
    if (!existsSync(path)) return [];
    return readFileSync(path, 'utf8')
      .split(SEPARATOR)
      .map((entry) => entry.trim())
      .filter(Boolean);
  }

  state(): MemoryState {
    return { memory: this.read('memory'), user: this.read('user') };
  }

  /**
   * Operations applied in order to the entries in hand and saved once: the limit is checked on the
   * final list only, so one call can free room and use it (Hermes' batch shape). All or nothing.
   */
  applyAll(target: MemoryTarget, operations: readonly MemoryOperation[]): string[] {
    let entries = this.read(target);
    for (const [index, operation] of operations.entries()) {
      try {
        entries = applyOne(entries, operation, target);
      } catch (error) {
        if (error instanceof ToolFailure && operations.length > 1)
          throw new ToolFailure(
            `operation ${index + 1} (${operation.action}): ${error.message}; nothing was saved`,
            error.hint,
          );
        throw error;
      }
    }
    return this.save(target, entries);
  }

  add(target: MemoryTarget, content: string): string[] {
    const entry = checked(content);
    const entries = this.read(target);
    if (entries.includes(entry)) return entries;
    return this.save(target, [...entries, entry]);
  }

  replace(target: MemoryTarget, oldText: string, content: string): string[] {
    const entries = this.read(target);
    const index = findEntry(entries, oldText, target);
    entries[index] = checked(content);
    return this.save(target, entries);
  }

  remove(target: MemoryTarget, oldText: string): string[] {
    const entries = this.read(target);
    entries.splice(findEntry(entries, oldText, target), 1);
    return this.save(target, entries);
  }

  private save(target: MemoryTarget, entries: string[]): string[] {
    const { limit, file } = MEMORY_TARGETS[target];
    const text = entries.join(SEPARATOR);
    if (text.length > limit) {
      throw new ToolFailure(
        `${file} would hold ${text.length} characters; its limit is ${limit}`,
        'replace or remove older entries first, or write a shorter entry',
      );
    }
    writeFileAtomically(join(this.folder, file), entries.length > 0 ? `${text}\n` : '');
    return entries;
  }
}

export interface MemoryOperation {
  action: 'add' | 'replace' | 'remove';
  content?: string;
  old_text?: string;
}

function need(value: string | undefined, action: string, field: string): string {
  if (value === undefined) throw new ToolFailure(`${action} needs ${field}`);
  return value;
}

function applyOne(entries: readonly string[], operation: MemoryOperation, target: MemoryTarget): string[] {
  const next = [...entries];
  const { action } = operation;
  if (action === 'add') {
    const entry = checked(need(operation.content, action, 'content'));
    return next.includes(entry) ? next : [...next, entry];
  }
  const index = findEntry(next, need(operation.old_text, action, 'old_text'), target);
  if (action === 'replace') next[index] = checked(need(operation.content, action, 'content'));
  else next.splice(index, 1);
  return next;
}

function checked(content: string): string {
  const entry = content.trim();
  if (!entry) throw new ToolFailure('the entry is empty', 'give the text to remember in content');
  const reason = injectionReason(entry);
  if (reason)
    throw new ToolFailure(
      `refused: the entry ${reason}, which memory never stores`,
      'store facts and preferences in plain words',
    );
  return entry;
}

function findEntry(entries: string[], oldText: string, target: MemoryTarget): number {
  const matches = entries.flatMap((entry, index) => (entry.includes(oldText) ? [index] : []));
  if (matches.length === 1) return matches[0]!;
  const hint = `old_text must be a piece of exactly one entry of ${target}`;
  if (matches.length === 0) throw new ToolFailure(`no ${target} entry contains '${oldText}'`, hint);
  throw new ToolFailure(`${matches.length} ${target} entries contain '${oldText}'`, `${hint}; quote more of it`);
}

/** The frozen snapshot for the system prompt; empty when nothing is remembered. */
export function memorySnapshot(state: MemoryState): string {
  const sections = (Object.keys(MEMORY_TARGETS) as MemoryTarget[])
    .filter((target) => state[target].length > 0)
    .map(
      (target) =>
        `## ${MEMORY_TARGETS[target].title}\n${state[target].map((entry) => `- ${entry.replace(/\n/g, '\n  ')}`).join('\n')}`,
    );
  return sections.length === 0 ? '' : `# Memory from earlier sessions\n${sections.join('\n\n')}`;
}
