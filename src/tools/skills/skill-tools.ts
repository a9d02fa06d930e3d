import { z } from 'zod';
import { defineTool, ToolFailure, type ToolContext } from '../registry.js';
import { SKILLS_STATE_KEY, SkillLibrary } from './skill-library.js';

function libraryOf(state: ToolContext['state']): SkillLibrary {
  const library = state.get(SKILLS_STATE_KEY);
  if (!(library instanceof SkillLibrary))
    throw new ToolFailure('skills are not enabled in this run', 'carry on without them');
  return library;
}

export const skillsListTool = defineTool({
  name: 'skills_list',
  toolset: 'skills',
  version: '1',
  description: 'List the available skills (name and description). Load one with skill_view.',
  parameters: z.object({}),
  run: (_args, { state }) => ({
    skills: libraryOf(state)
      .list()
      .map(({ name, description, writable }) => ({ name, description, writable })),
  }),
});

export const skillViewTool = defineTool({
  name: 'skill_view',
  toolset: 'skills',
  version: '1',
  description:
    "Load a skill: without file, its instructions and the list of its reference files; with file, that file's text.",
  parameters: z.object({
    name: z.string().describe('the skill name, as skills_list gives it'),
    file: z.string().optional().describe('a reference file of the skill, e.g. references/api.md'),
  }),
  run: ({ name, file }, { state }) => libraryOf(state).view(name, file),
});

export const skillManageTool = defineTool({
  name: 'skill_manage',
  toolset: 'skills',
  version: '1',
  description:
    'Create, edit, patch or delete a skill. create/edit take the whole SKILL.md: front matter (---, name: lowercase-with-hyphens, ' +
    'description: what it does and when to use it, ---) then the instructions. patch replaces old_text (once) with new_text.',
  parameters: z.object({
    action: z.enum(['create', 'edit', 'patch', 'delete']).describe('what to do with the skill'),
    name: z.string().optional().describe('the skill to edit, patch or delete'),
    content: z.string().optional().describe('create/edit: the whole SKILL.md'),
    old_text: z.string().optional().describe('patch: text to replace, occurring exactly once'),
    new_text: z.string().optional().describe('patch: the replacement'),
  }),
  run: ({ action, name, content, old_text, new_text }, { state }) => {
    const library = libraryOf(state);
    const need = (value: string | undefined, field: string) => {
      if (value === undefined) throw new ToolFailure(`${action} needs ${field}`);
      return value;
    };
    if (action === 'create') return { created: library.create(need(content, 'content')).name };
    if (action === 'edit') return { edited: library.edit(need(name, 'name'), need(content, 'content')).name };
    if (action === 'patch')
      return {
        patched: library.patch(need(name, 'name'), need(old_text, 'old_text'), need(new_text, 'new_text')).name,
      };
    library.delete(need(name, 'name'));
    return { deleted: name };
  },
});
