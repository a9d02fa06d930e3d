import { ToolRegistry } from './registry.js';
import type { Tool } from './tool.js';

export interface BuiltinOptions {
  /** `persistent: false` swaps in the terminal that starts a fresh shell per call. */
  terminal?: { persistent: boolean };
}

interface BuiltinToolset {
  name: string;
  load(options: BuiltinOptions): Promise<readonly Tool[]>;
}

/**
 * The toolsets traj ships, in the order their tools are offered: terminal, file, todo, web,
 * vision, moa, image_gen and browser, then memory, skills and session_search (these act on what
 * the caller puts in the run state; chat does), clarify (chat asks the person; elsewhere a set answer), then
 * code_execution and delegation.
 *
 * Each imports its own modules when first asked for: a worker thread of a `file` run does not
 * compile the browser, web or code-execution tools before its first model request.
 */
export const BUILTIN_TOOLSETS: readonly BuiltinToolset[] = [
  {
    name: 'terminal',
    load: async (options) => {
      const [{ terminalToolFor }, { processTool }] = await Promise.all([
        import('./terminal.js'),
        import('./process/process-tool.js'),
      ]);
      return [terminalToolFor(options.terminal?.persistent ?? true), processTool];
    },
  },
  {
    name: 'file',
    load: async () => {
      const [{ readFileTool }, { writeFileTool }, { patchTool }, { searchFilesTool }] = await Promise.all([
        import('./read-file.js'),
        import('./write-file.js'),
        import('./patch.js'),
        import('./search-files.js'),
      ]);
      return [readFileTool, writeFileTool, patchTool, searchFilesTool];
    },
  },
  {
    name: 'todo',
    load: async () => {
      const { todoTool } = await import('./todo.js');
      return [todoTool];
    },
  },
  {
    name: 'web',
    load: async () => {
      const [{ webSearchTool }, { webExtractTool }] = await Promise.all([
        import('./web/web-search.js'),
        import('./web/web-extract.js'),
      ]);
      return [webSearchTool, webExtractTool];
    },
  },
  { name: 'vision', load: async () => [(await import('./vision/vision-analyze.js')).visionAnalyzeTool] },
  { name: 'moa', load: async () => [(await import('./moa/mixture-of-agents.js')).mixtureOfAgentsTool] },
  { name: 'image_gen', load: async () => [(await import('./image/image-generate.js')).imageGenerateTool] },
  { name: 'browser', load: async () => (await import('./browser/index.js')).BROWSER_TOOLS },
  { name: 'memory', load: async () => [(await import('./memory/memory.js')).memoryTool] },
  {
    name: 'skills',
    load: async () => {
      const { skillsListTool, skillViewTool, skillManageTool } = await import('./skills/skill-tools.js');
      return [skillsListTool, skillViewTool, skillManageTool];
    },
  },
  { name: 'session_search', load: async () => [(await import('./session-search.js')).sessionSearchTool] },
  { name: 'clarify', load: async () => [(await import('./clarify.js')).clarifyTool] },
  { name: 'code_execution', load: async () => [(await import('./code/execute-code.js')).executeCodeTool] },
  { name: 'delegation', load: async () => [(await import('./delegate/delegate-task.js')).delegateTaskTool] },
];

/**
 * A fresh registry that knows every built-in toolset by name and has loaded none of their tools:
 * callers `load` the toolsets they offer, and add MCP and other tools to it.
 */
export function builtinRegistry(options: BuiltinOptions = {}): ToolRegistry {
  const registry = new ToolRegistry();
  for (const toolset of BUILTIN_TOOLSETS) registry.declareToolset(toolset.name, () => toolset.load(options));
  return registry;
}

/** A fresh registry with the tools of `toolsets` loaded (every built-in toolset when omitted). */
export function loadToolRegistry(
  options: BuiltinOptions & { toolsets?: readonly string[] } = {},
): Promise<ToolRegistry> {
  return builtinRegistry(options).load(options.toolsets ?? BUILTIN_TOOLSETS.map((toolset) => toolset.name));
}

/** Every built-in tool, in the order offered (the persistent terminal). */
export async function builtinTools(): Promise<Tool[]> {
  return (await loadToolRegistry()).all();
}
