export * from './config.js';
export {
  McpClientPool,
  type McpCallOptions,
  type McpClientPoolOptions,
  type McpServerRef,
  type McpToolInfo,
} from './client-pool.js';
export { interpolate, type McpConnection } from './connect.js';
export * from './names.js';
export * from './result.js';
export * from './tools.js';
