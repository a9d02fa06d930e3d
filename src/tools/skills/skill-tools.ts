import { z } from 'zod';
import { defineTool, type ToolContext } from '../tool.js';
import { ToolFailure } from '../tool-failure.js';
import { SKILLS_STATE_KEY, SkillLibrary } from './skill-library.js';

function libraryOf(state: ToolContext['state']): SkillLibrary {
  const library = state.get(SKILLS_STATE_KEY);
  if (!(library instanceof SkillLibrary))
    throw new ToolFailure('skills are not enabled in this run', 'carry on without them');
  return library;
}

export const SkillsListParameters = z.object({
  category: z.string().optional().describe('Optional category filter to narrow results'),
});

export const skillsListTool = defineTool({
  name: 'skills_list',
  toolset: 'skills',
  version: '2',
  // Hermes' words, as hermes-agent sends them (tests/fixtures/hermes/tool-schemas.json).
  description: 'List available skills (name + description). Use skill_view(name) to load full content.',
  parameters: SkillsListParameters,
  run: ({ category }, { state }) => ({
    skills: libraryOf(state)
      .list()
      .filter((skill) => category === undefined || skill.category === category)
      .map(({ name, description, writable, category: group }) => ({
        name,
        description,
        writable,
        ...(group ? { category: group } : {}),
      })),
  }),
});

export const SkillViewParameters = z.object({
  name: z
    .string()
    .describe(
      "The skill name (use skills_list to see available skills). For plugin-provided skills, use the qualified form 'plugin:skill' (e.g. 'superpowers:writing-plans').",
    ),
  file_path: z
    .string()
    .optional()
    .describe(
      "OPTIONAL: Path to a linked file within the skill (e.g., 'references/api.md', 'templates/config.yaml', 'scripts/validate.py'). Omit to get the main SKILL.md content.",
    ),
});

export const skillViewTool = defineTool({
  name: 'skill_view',
  toolset: 'skills',
  version: '2',
  // Hermes' words, as hermes-agent sends them (tests/fixtures/hermes/tool-schemas.json).
  description:
    "Skills allow for loading information about specific tasks and workflows, as well as scripts and templates. Load a skill's full content or access its linked files (references, templates, scripts). First call returns SKILL.md content plus a 'linked_files' dict showing available references/templates/scripts. To access those, call again with file_path parameter.",
  parameters: SkillViewParameters,
  run: ({ name, file_path }, { state }) => libraryOf(state).view(name, file_path),
});

export const SkillManageParameters = z.object({
  action: z.enum(['create', 'patch', 'edit', 'delete', 'write_file', 'remove_file']).describe('The action to perform.'),
  name: z
    .string()
    .describe(
      'Skill name (lowercase, hyphens/underscores, max 64 chars). Must match an existing skill for patch/edit/delete/write_file/remove_file.',
    ),
  content: z
    .string()
    .optional()
    .describe(
      "Full SKILL.md content (YAML frontmatter + markdown body). Required for 'create' and 'edit'. For 'edit', read the skill first with skill_view() and provide the complete updated text.",
    ),
  old_string: z
    .string()
    .optional()
    .describe(
      "Text to find in the file (required for 'patch'). Must be unique unless replace_all=true. Include enough surrounding context to ensure uniqueness.",
    ),
  new_string: z
    .string()
    .optional()
    .describe("Replacement text (required for 'patch'). Can be empty string to delete the matched text."),
  replace_all: z
    .boolean()
    .optional()
    .describe("For 'patch': replace all occurrences instead of requiring a unique match (default: false)."),
  category: z
    .string()
    .optional()
    .describe(
      "Optional category/domain for organizing the skill (e.g., 'devops', 'data-science', 'mlops'). Creates a subdirectory grouping. Only used with 'create'.",
    ),
  file_path: z
    .string()
    .optional()
    .describe(
      "Path to a supporting file within the skill directory. For 'write_file'/'remove_file': required, must be under references/, templates/, scripts/, or assets/. For 'patch': optional, defaults to SKILL.md if omitted.",
    ),
  file_content: z.string().optional().describe("Content for the file. Required for 'write_file'."),
  absorbed_into: z
    .string()
    .optional()
    .describe(
      "For 'delete' only — declares intent so the curator can tell consolidation from pruning without guessing. Pass the umbrella skill name when this skill's content was merged into another (the target must already exist). Pass an empty string when the skill is truly stale and being pruned with no forwarding target. Omitting the arg on delete is supported for backward compatibility but downstream tooling (e.g. cron-job skill reference rewriting) will have to guess at intent.",
    ),
});
type SkillManageArguments = z.infer<typeof SkillManageParameters>;

/** Hermes builds this description with its home folder; traj's skills live in TRAJ_HOME/skills. */
export const SKILL_MANAGE_DESCRIPTION =
  "Manage skills (create, update, delete). Skills are your procedural memory — reusable approaches for recurring task types. New skills go to ~/.hermes/skills/; existing skills can be modified wherever they live.\n\nActions: create (full SKILL.md + optional category), patch (old_string/new_string — preferred for fixes), edit (full SKILL.md rewrite — major overhauls only), delete, write_file, remove_file.\n\nOn delete, pass `absorbed_into=<umbrella>` when you're merging this skill's content into another one, or `absorbed_into=\"\"` when you're pruning it with no forwarding target. This lets the curator tell consolidation from pruning without guessing, so downstream consumers (cron jobs that reference the old skill name, etc.) get updated correctly. The target you name in `absorbed_into` must already exist — create/patch the umbrella first, then delete.\n\nCreate when: complex task succeeded (5+ calls), errors overcome, user-corrected approach worked, non-trivial workflow discovered, or user asks you to remember a procedure.\nUpdate when: instructions stale/wrong, OS-specific failures, missing steps or pitfalls found during use. If you used a skill and hit issues not covered by it, patch it immediately.\n\nAfter difficult/iterative tasks, offer to save as a skill. Skip for simple one-offs. Confirm with user before creating/deleting.\n\nGood skills: trigger conditions, numbered steps with exact commands, pitfalls section, verification steps. Use skill_view() to see format examples.\n\nPinned skills are protected from deletion only — skill_manage(action='delete') will refuse with a message pointing the user to `hermes curator unpin <name>`. Patches and edits go through on pinned skills so you can still improve them as pitfalls come up; pin only guards against irrecoverable loss.";

function need<T>(args: SkillManageArguments, field: keyof SkillManageArguments): T {
  const value = args[field];
  if (value === undefined) throw new ToolFailure(`${args.action} needs ${field}`);
  return value as T;
}

function manage(library: SkillLibrary, args: SkillManageArguments): Record<string, unknown> {
  const { action, name } = args;
  switch (action) {
    case 'create':
      return { success: true, created: library.create(need(args, 'content'), args.category, name).name };
    case 'edit':
      return { success: true, edited: library.edit(name, need(args, 'content')).name };
    case 'patch': {
      const options = { replaceAll: args.replace_all ?? false, filePath: args.file_path };
      return {
        success: true,
        patched: library.patch(name, need(args, 'old_string'), need(args, 'new_string'), options).name,
      };
    }
    case 'write_file':
      return { success: true, written: library.writeFile(name, need(args, 'file_path'), need(args, 'file_content')) };
    case 'remove_file':
      return { success: true, removed: library.removeFile(name, need(args, 'file_path')) };
    case 'delete': {
      if (args.absorbed_into) library.get(args.absorbed_into);
      library.delete(name);
      return {
        success: true,
        deleted: name,
        ...(args.absorbed_into !== undefined ? { absorbed_into: args.absorbed_into } : {}),
      };
    }
  }
}

export const skillManageTool = defineTool({
  name: 'skill_manage',
  toolset: 'skills',
  version: '2',
  description: SKILL_MANAGE_DESCRIPTION,
  parameters: SkillManageParameters,
  run: (args, { state }) => manage(libraryOf(state), args),
});
