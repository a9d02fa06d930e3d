import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { writeFileAtomically } from '../../util/atomic-write.js';
import { lazyRequire } from '../../util/lazy-require.js';
import { injectionReason } from '../memory/injection.js';
import { replaceText } from '../patch.js';
import { ToolFailure } from '../tool-failure.js';

/** One skill: a folder with a SKILL.md (YAML front matter, then the instructions) and reference files. */
export interface Skill {
  name: string;
  description: string;
  folder: string;
  /** Other front-matter fields of the Agent Skills format (license, allowed-tools, metadata, …). */
  fields: Record<string, unknown>;
  writable: boolean;
  /** The category folder the skill sits in, when it sits in one. */
  category?: string;
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
/** Where write_file and remove_file may put a skill's supporting files (Hermes' layout). */
const SUPPORT_FOLDERS = ['references', 'templates', 'scripts', 'assets'];
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
              ...(dirname(folder) !== root.folder ? { category: relative(root.folder, dirname(folder)) } : {}),
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

  create(content: string, category?: string, name?: string): Skill {
    const parsed = checkedSkill(content);
    if (name !== undefined && name !== parsed.name)
      throw new ToolFailure(
        `name '${name}' differs from the name in the frontmatter, '${parsed.name}'`,
        'use the same name in both',
      );
    if (this.list().some((skill) => skill.name === parsed.name))
      throw new ToolFailure(`a skill named '${parsed.name}' exists`, 'use edit or patch to change it');
    if (category !== undefined && !NAME.test(category))
      throw new ToolFailure(
        `category '${category}' is not a plain folder name`,
        'use lowercase letters, digits and hyphens',
      );
    const folder = join(this.writableRoot().folder, ...(category ? [category] : []), parsed.name);
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

  /** Replace text in SKILL.md, or in one supporting file when `filePath` names it. */
  patch(
    name: string,
    oldText: string,
    newText: string,
    options: { replaceAll?: boolean; filePath?: string } = {},
  ): Skill {
    const skill = this.writableSkill(name);
    const file =
      options.filePath && options.filePath !== 'SKILL.md' ? this.supportPath(skill, options.filePath) : undefined;
    const path = file ?? join(skill.folder, 'SKILL.md');
    if (!existsSync(path)) throw new ToolFailure(`skill '${name}' has no file '${options.filePath}'`);
    const changed = replaceText(
      `${name}/${options.filePath ?? 'SKILL.md'}`,
      readFileSync(path, 'utf8'),
      oldText,
      newText,
      options.replaceAll ?? false,
    );
    if (!file) return this.edit(name, changed);
    writeFileAtomically(path, changed);
    return skill;
  }

  writeFile(name: string, filePath: string, content: string): string {
    const path = this.supportPath(this.writableSkill(name), filePath);
    const reason = injectionReason(content);
    if (reason) throw new ToolFailure(`refused: the file ${reason}`, 'write it in plain words');
    mkdirSync(dirname(path), { recursive: true });
    writeFileAtomically(path, content);
    return filePath;
  }

  removeFile(name: string, filePath: string): string {
    const path = this.supportPath(this.writableSkill(name), filePath);
    if (!existsSync(path)) throw new ToolFailure(`skill '${name}' has no file '${filePath}'`);
    rmSync(path);
    return filePath;
  }

  /** A supporting file's path, refused outside references/, templates/, scripts/ or assets/. */
  private supportPath(skill: Skill, filePath: string): string {
    const path = resolve(skill.folder, filePath);
    const inside = relative(skill.folder, path);
    if (
      inside.startsWith('..') ||
      !path.startsWith(skill.folder + sep) ||
      !SUPPORT_FOLDERS.includes(inside.split(sep)[0]!)
    )
      throw new ToolFailure(
        `'${filePath}' is not a supporting file of the skill`,
        `use a path under ${SUPPORT_FOLDERS.map((folder) => `${folder}/`).join(', ')}`,
      );
    return path;
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
