export { delegateTaskTool, DelegateTaskParameters, MAX_PARALLEL_TASKS } from './delegate-task.js';
