export { processTool, ProcessParameters } from './process-tool.js';
export { ProcessTable, POLL_MAX_BYTES, type BackgroundProcess, type ProcessStatus } from './process-table.js';
