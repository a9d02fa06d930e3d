export * from './events.js';
export * from './loop.js';
export * from './result.js';
export * from './stop-conditions.js';
export * from './system-prompt.js';
export { runToolStep, type ToolStep, type ToolStepOptions } from './tool-step.js';
export { CHILD_SYSTEM_PROMPT, MAX_DELEGATION_DEPTH, DEFAULT_CHILD_MAX_TURNS } from './subagent.js';
