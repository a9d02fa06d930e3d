export * from './tool.js';
export * from './tool-failure.js';
export * from './tool-spec.js';
export * from './registry.js';
export * from './execute-tool-call.js';
export * from './budget.js';
export * from './builtin.js';
export {
  terminalTool,
  terminalToolFor,
  TerminalParameters,
  shortenMiddle,
  mergeOutput,
  TERMINAL_OUTPUT_MAX_CHARS,
  TERMINAL_DEFAULT_TIMEOUT,
  TERMINAL_FOREGROUND_MAX_TIMEOUT,
} from './terminal.js';
export { readFileTool, ReadFileParameters, READ_FILE_DEFAULT_LIMIT } from './read-file.js';
export { writeFileTool, WriteFileParameters } from './write-file.js';
export { patchTool, PatchParameters } from './patch.js';
export { searchFilesTool, SearchFilesParameters, SEARCH_DEFAULT_LIMIT } from './search-files.js';
export {
  todoTool,
  TodoItemSchema,
  TodoParameters,
  TODO_STATUSES,
  TODO_STATE_KEY,
  readTodos,
  type TodoItem,
} from './todo.js';
export { inSandbox } from './sandbox-failure.js';
export * from './distributions.js';
export * from './memory/index.js';
export * from './skills/index.js';
export {
  sessionSearchTool,
  SESSION_SEARCH_STATE_KEY,
  type SessionSearch,
  type PastSessionHit,
} from './session-search.js';
export * from './services.js';
export * from './web/index.js';
export { visionAnalyzeTool, VisionAnalyzeParameters } from './vision/vision-analyze.js';
export { imageAsDataUrl, sniffImageType } from './vision/image-source.js';
export { mixtureOfAgentsTool, MixtureOfAgentsParameters } from './moa/mixture-of-agents.js';
export { imageGenerateTool, ImageGenerateParameters } from './image/image-generate.js';
export * from './browser/index.js';
export { disposeToolState, type ToolResource } from './tool-state.js';
export * from './nested.js';
export * from './delegate/index.js';
export * from './code/index.js';
export * from './process/index.js';
export {
  clarifyTool,
  ClarifyParameters,
  CLARIFY_STATE_KEY,
  type ClarifyAsker,
} from './clarify.js';
export { HERMES_COMMIT, HERMES_TOOL_NAMES } from './hermes-tool-names.js';
