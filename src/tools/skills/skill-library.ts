import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { writeFileAtomically } from '../../util/atomic-write.js';
import { lazyRequire } from '../../util/lazy-require.js';
import { injectionReason } from '../memory/injection.js';
import { ToolFailure } from '../registry.js';

/** One skill: a folder with a SKILL.md (YAML front matter, then the instructions) and reference files. */
export interface Skill {
  name: string;
  description: string;
  folder: string;
  /** Other front-matter fields of the Agent Skills format (license, allowed-tools, metadata, …). */
  fields: Record<string, unknown>;
  writable: boolean;
}

export interface SkillRoot {
  folder: string;
  /** Whether skill_manage may change skills here (chat: TRAJ_HOME/skills; batch only with --skills-writable). */
  writable: boolean;
}

/** Key of the library in ToolContext.state. */
export const SKILLS_STATE_KEY = 'skills';

/** Agent Skills names: lowercase letters, digits and hyphens, at most 64 characters. */
const NAME = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/;
const MAX_FILE_CHARS = 40_000;
const yaml = lazyRequire<typeof import('yaml')>('yaml');

export function parseSkillFile(
  text: string,
  where: string,
): { name: string; description: string; fields: Record<string, unknown>; body: string } {
  const match = FRONT_MATTER.exec(text);
  if (!match)
    throw new ToolFailure(
      `${where}: SKILL.md must start with YAML front matter between --- lines`,
      'begin with ---\\nname: my-skill\\ndescription: what it does and when to use it\\n---',
    );
  const fields = (yaml().parse(match[1]!) ?? {}) as Record<string, unknown>;
  const { name, description, ...rest } = fields;
  if (typeof name !== 'string' || !NAME.test(name))
    throw new ToolFailure(
      `${where}: front matter 'name' must be lowercase letters, digits and hyphens (got ${JSON.stringify(name)})`,
    );
  if (typeof description !== 'string' || !description.trim())
    throw new ToolFailure(`${where}: front matter needs a 'description'`);
  return { name, description: description.trim(), fields: rest, body: match[2]!.trim() };
}

/**
 * The skills of some folders (the first root holding a name wins), read fresh on each call so a
 * skill created in one conversation is seen by the next. Tracks which skills were viewed.
 */
export class SkillLibrary {
  readonly viewed = new Set<string>();

  constructor(readonly roots: readonly SkillRoot[]) {}

  list(): Skill[] {
    const found = new Map<string, Skill>();
    for (const root of this.roots) {
      for (const folder of skillFolders(root.folder)) {
        try {
          const parsed = parseSkillFile(readFileSync(join(folder, 'SKILL.md'), 'utf8'), folder);
          if (!found.has(parsed.name))
            found.set(parsed.name, {
              name: parsed.name,
              description: parsed.description,
              folder,
              fields: parsed.fields,
              writable: root.writable,
            });
        } catch {
          // A malformed skill is left out of the index; skill_view names the problem when asked for it.
        }
      }
    }
    return [...found.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  get(name: string): Skill {
    const skill = this.list().find((candidate) => candidate.name === name);
    if (!skill)
      throw new ToolFailure(
        `no skill named '${name}'`,
        `known skills: ${
          this.list()
            .map((s) => s.name)
            .join(', ') || '(none)'
        }`,
      );
    return skill;
  }

  /** The body and the list of reference files; or, with `file`, that file. */
  view(name: string, file?: string): Record<string, unknown> {
    const skill = this.get(name);
    this.viewed.add(name);
    if (file === undefined) {
      const { body } = parseSkillFile(readFileSync(join(skill.folder, 'SKILL.md'), 'utf8'), skill.folder);
      return {
        name,
        description: skill.description,
        ...skill.fields,
        instructions: body,
        files: referenceFiles(skill.folder),
      };
    }
    const path = resolve(skill.folder, file);
    if (relative(skill.folder, path).startsWith('..') || !path.startsWith(skill.folder + sep))
      throw new ToolFailure(`'${file}' is outside the skill folder`);
    if (!existsSync(path) || !statSync(path).isFile())
      throw new ToolFailure(
        `skill '${name}' has no file '${file}'`,
        `files: ${referenceFiles(skill.folder).join(', ') || '(none)'}`,
      );
    const text = readFileSync(path, 'utf8');
    return {
      name,
      file,
      content:
        text.length > MAX_FILE_CHARS
          ? `${text.slice(0, MAX_FILE_CHARS)}\n…[cut at ${MAX_FILE_CHARS} characters]`
          : text,
    };
  }

  create(content: string): Skill {
    const parsed = checkedSkill(content);
    if (this.list().some((skill) => skill.name === parsed.name))
      throw new ToolFailure(`a skill named '${parsed.name}' exists`, 'use edit or patch to change it');
    const folder = join(this.writableRoot().folder, parsed.name);
    mkdirSync(folder, { recursive: true });
    writeFileAtomically(join(folder, 'SKILL.md'), content.endsWith('\n') ? content : `${content}\n`);
    return this.get(parsed.name);
  }

  edit(name: string, content: string): Skill {
    const skill = this.writableSkill(name);
    const parsed = checkedSkill(content);
    if (parsed.name !== name)
      throw new ToolFailure(
        `the new SKILL.md is named '${parsed.name}', not '${name}'`,
        'keep the name; delete and create to rename',
      );
    writeFileAtomically(join(skill.folder, 'SKILL.md'), content.endsWith('\n') ? content : `${content}\n`);
    return this.get(name);
  }

  patch(name: string, oldText: string, newText: string): Skill {
    const skill = this.writableSkill(name);
    const text = readFileSync(join(skill.folder, 'SKILL.md'), 'utf8');
    const count = text.split(oldText).length - 1;
    if (count !== 1)
      throw new ToolFailure(
        `old_text occurs ${count} times in ${name}/SKILL.md; it must occur exactly once`,
        'quote more of the text',
      );
    return this.edit(
      name,
      text.replace(oldText, () => newText),
    );
  }

  delete(name: string): void {
    rmSync(this.writableSkill(name).folder, { recursive: true, force: true });
  }

  private writableRoot(): SkillRoot {
    const root = this.roots.find((candidate) => candidate.writable);
    if (!root) throw new ToolFailure('skills are read-only in this run', 'use the skills as they are');
    return root;
  }

  private writableSkill(name: string): Skill {
    const skill = this.get(name);
    if (!skill.writable) throw new ToolFailure(`skill '${name}' is read-only here`, 'use it as it is');
    return skill;
  }
}

function checkedSkill(content: string) {
  const parsed = parseSkillFile(content, 'SKILL.md');
  const reason = injectionReason(content);
  if (reason) throw new ToolFailure(`refused: the skill ${reason}`, 'write instructions in plain words');
  return parsed;
}

/** Folders holding a SKILL.md, directly under the root or one category level down. */
function skillFolders(root: string): string[] {
  if (!existsSync(root)) return [];
  const out: string[] = [];
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const folder = join(root, entry.name);
    if (existsSync(join(folder, 'SKILL.md'))) out.push(folder);
    else
      for (const inner of readdirSync(folder, { withFileTypes: true }))
        if (inner.isDirectory() && existsSync(join(folder, inner.name, 'SKILL.md'))) out.push(join(folder, inner.name));
  }
  return out;
}

function referenceFiles(folder: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(folder, prefix), { withFileTypes: true })) {
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...referenceFiles(folder, path));
    else if (path !== 'SKILL.md') out.push(path);
  }
  return out.sort();
}

/** The compact index for the system prompt: name and description of each skill. */
export function skillsIndex(skills: readonly Skill[]): string {
  if (skills.length === 0) return '';
  return `# Skills\nLoad a skill with skill_view(name) before a task it covers.\n${skills.map((skill) => `- ${skill.name}: ${skill.description}`).join('\n')}`;
}
