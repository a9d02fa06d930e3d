export { skillsListTool, skillViewTool, skillManageTool } from './skill-tools.js';
export {
  SkillLibrary,
  SKILLS_STATE_KEY,
  parseSkillFile,
  skillsIndex,
  type Skill,
  type SkillRoot,
} from './skill-library.js';
