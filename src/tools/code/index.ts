export { executeCodeTool, ExecuteCodeParameters } from './execute-code.js';
export { pythonName, toolsModule } from './python-module.js';
