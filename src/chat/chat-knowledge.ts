import { join } from 'node:path';
import { contextFilesSection, discoverContextFiles } from '../agent/context-files.js';
import { MEMORY_STATE_KEY, MemoryStore, memorySnapshot } from '../tools/memory/memory-store.js';
import { SESSION_SEARCH_STATE_KEY } from '../tools/session-search.js';
import { SKILLS_STATE_KEY, SkillLibrary, skillsIndex } from '../tools/skills/skill-library.js';
import { trajHome } from '../util/paths.js';
import { pastSessionSearch } from './session-search.js';
import type { SessionStore } from './session-store.js';

/** What a chat knows beyond the conversation: memory, skills, past sessions and the project's context files. */
export interface ChatKnowledge {
  memory: MemoryStore;
  skills: SkillLibrary;
  /** The context-files section, read once at launch ('' when off or none found). */
  contextFiles: string;
}

export interface KnowledgeOptions {
  /** Default TRAJ_HOME; memories/ and skills/ live under it. */
  home?: string;
  /** More skill folders (--skills DIR), read-only. */
  skillFolders?: string[];
  /** Where AGENTS.md / .traj.md discovery starts; undefined: no context files (--no-context-files). */
  contextFrom?: string;
}

export function loadChatKnowledge(options: KnowledgeOptions): ChatKnowledge {
  const home = options.home ?? trajHome();
  return {
    memory: new MemoryStore(join(home, 'memories')),
    skills: new SkillLibrary([
      { folder: join(home, 'skills'), writable: true },
      ...(options.skillFolders ?? []).map((folder) => ({ folder, writable: false })),
    ]),
    contextFiles: options.contextFrom
      ? contextFilesSection(discoverContextFiles(options.contextFrom), options.contextFrom)
      : '',
  };
}

/**
 * The system-prompt sections of a new session, a snapshot taken now: a memory written during the
 * session reaches the prompt of the next one, so this one's prefix stays byte-stable.
 */
export function knowledgeSections(knowledge: ChatKnowledge | undefined, toolsets: readonly string[]): string[] {
  if (!knowledge) return [];
  return [
    knowledge.contextFiles,
    toolsets.includes('memory') ? memorySnapshot(knowledge.memory.state()) : '',
    toolsets.includes('skills') ? skillsIndex(knowledge.skills.list()) : '',
  ];
}

/** Put the stores the memory, skills and session_search tools act on into a session's tool state. */
export function provideKnowledge(
  state: Map<string, unknown>,
  knowledge: ChatKnowledge | undefined,
  store: SessionStore,
  sessionId: () => string,
): void {
  if (knowledge) {
    state.set(MEMORY_STATE_KEY, knowledge.memory);
    state.set(SKILLS_STATE_KEY, knowledge.skills);
  }
  state.set(SESSION_SEARCH_STATE_KEY, pastSessionSearch(store, sessionId));
}
