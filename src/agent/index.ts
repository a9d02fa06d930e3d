export * from './events.js';
export * from './loop.js';
export * from './result.js';
export * from './stop-conditions.js';
export * from './system-prompt.js';
export { runToolStep, type ToolStep, type ToolStepOptions } from './tool-step.js';
