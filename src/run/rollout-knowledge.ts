import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import { sha256 } from '../util/hash.js';
import {
  MEMORY_STATE_KEY,
  MEMORY_TARGETS,
  MemoryStore,
  memorySnapshot,
  type MemoryState,
} from '../tools/memory/memory-store.js';
import { SKILLS_STATE_KEY, SkillLibrary, skillsIndex } from '../tools/skills/skill-library.js';

/** Memory and skills of one rollout (batch/eval `--memory DIR`, `--skills DIR`); both off by default. */
export interface RolloutKnowledge {
  /** Tool state to hand the agent (the stores the memory and skills tools act on). */
  state: Map<string, unknown>;
  /** System-prompt sections: the memory snapshot and the skills index, for the toolsets drawn. */
  sections: string[];
  /** The memory as the rollout left it (null when memory is off). */
  finalMemory(): MemoryState | null;
  skillsViewed(): string[];
  /** Remove the rollout's private memory copy. */
  dispose(): void;
}

export interface KnowledgeSettings {
  memory?: string;
  skills?: string[];
  skillsWritable?: boolean;
}

/** Each rollout gets a private copy of the seed memory, so rollouts never see each other's notes. */
export function rolloutKnowledge(settings: KnowledgeSettings, toolsets: readonly string[]): RolloutKnowledge {
  const state = new Map<string, unknown>();
  let copy: string | undefined;
  let memory: MemoryStore | undefined;
  if (settings.memory) {
    copy = mkdtempSync(join(tmpdir(), 'traj-memory-'));
    for (const { file } of Object.values(MEMORY_TARGETS)) {
      const seed = join(settings.memory, file);
      if (existsSync(seed)) copyFileSync(seed, join(copy, file));
    }
    memory = new MemoryStore(copy);
    state.set(MEMORY_STATE_KEY, memory);
  }
  const skills = settings.skills?.length
    ? new SkillLibrary(settings.skills.map((folder) => ({ folder, writable: settings.skillsWritable === true })))
    : undefined;
  if (skills) state.set(SKILLS_STATE_KEY, skills);
  return {
    state,
    sections: [
      memory && toolsets.includes('memory') ? memorySnapshot(memory.state()) : '',
      skills && toolsets.includes('skills') ? skillsIndex(skills.list()) : '',
    ],
    finalMemory: () => memory?.state() ?? null,
    skillsViewed: () => [...(skills?.viewed ?? [])].sort(),
    dispose: () => {
      if (copy) rmSync(copy, { recursive: true, force: true });
    },
  };
}

/** `--memory DIR` / `--skills DIR` as absolute folders that exist (checked before any worker starts). */
export function knowledgeFolder(path: string, flag: string): string {
  const folder = resolve(path);
  if (!existsSync(folder) || !statSync(folder).isDirectory())
    throw new ConfigError(`${flag} ${path}: no such folder`, { code: 'config_missing' });
  return folder;
}

/**
 * What memory, skills and compression add to a run's fingerprint: nothing when none is set (so
 * the fingerprints of runs made without them do not change), else the folders, the seed memory's
 * content hash and the compression settings.
 */
export function knowledgeFingerprint(
  settings: KnowledgeSettings & { compression?: unknown },
): Record<string, unknown> | undefined {
  if (!settings.memory && !settings.skills?.length && settings.compression === undefined) return undefined;
  const seed = settings.memory
    ? Object.values(MEMORY_TARGETS).map(({ file }) =>
        existsSync(join(settings.memory!, file)) ? readFileSync(join(settings.memory!, file), 'utf8') : '',
      )
    : undefined;
  return {
    memory: settings.memory ? { folder: settings.memory, content: sha256(seed!.join('\0')).slice(0, 16) } : null,
    skills: settings.skills ?? null,
    skills_writable: settings.skillsWritable === true,
    compression: settings.compression ?? null,
  };
}
