export { processManageTool, ProcessManageParameters } from './process-manage.js';
export { ProcessTable, POLL_MAX_BYTES, type BackgroundProcess, type ProcessStatus } from './process-table.js';
