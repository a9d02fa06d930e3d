import { BROWSER_TOOLS } from './browser/index.js';
import { executeCodeTool } from './code/execute-code.js';
import { processManageTool } from './process/process-manage.js';
import { delegateTaskTool } from './delegate/delegate-task.js';
import { imageGenerateTool } from './image/image-generate.js';
import { memoryTool } from './memory/memory.js';
import { mixtureOfAgentsTool } from './moa/mixture-of-agents.js';
import { patchTool } from './patch.js';
import { readFileTool } from './read-file.js';
import { ToolRegistry, type Tool } from './registry.js';
import { searchFilesTool } from './search-files.js';
import { sessionSearchTool } from './session-search.js';
import { skillManageTool, skillsListTool, skillViewTool } from './skills/skill-tools.js';
import { terminalTool, terminalToolFor } from './terminal.js';
import { visionAnalyzeTool } from './vision/vision-analyze.js';
import { webExtractTool } from './web/web-extract.js';
import { webSearchTool } from './web/web-search.js';
import { todoReadTool, todoWriteTool } from './todo.js';
import { writeFileTool } from './write-file.js';

/**
 * The tools traj ships, in the order they are offered: toolsets terminal, file, todo, web, vision,
 * moa, image_gen and browser, then memory, skills and session_search (these act on what the caller
 * puts in the run state; chat does), then code_execution and delegation.
 */
export const BUILTIN_TOOLS: readonly Tool[] = [
  terminalTool,
  processManageTool,
  readFileTool,
  writeFileTool,
  patchTool,
  searchFilesTool,
  todoWriteTool,
  todoReadTool,
  webSearchTool,
  webExtractTool,
  visionAnalyzeTool,
  mixtureOfAgentsTool,
  imageGenerateTool,
  ...BROWSER_TOOLS,
  memoryTool,
  skillsListTool,
  skillViewTool,
  skillManageTool,
  sessionSearchTool,
  executeCodeTool,
  delegateTaskTool,
];

/**
 * A fresh registry holding the built-in tools; callers add MCP and other tools to it.
 * `terminal.persistent: false` swaps in the terminal that starts a fresh shell per call.
 */
export function createToolRegistry(options: { terminal?: { persistent: boolean } } = {}): ToolRegistry {
  const terminal = terminalToolFor(options.terminal?.persistent ?? true);
  return new ToolRegistry().register(...BUILTIN_TOOLS.map((tool) => (tool === terminalTool ? terminal : tool)));
}
