export {
  AgentDefinitionSchema,
  agentDefinitionPaths,
  isAgentDefinitionPath,
  loadAgentDefinition,
  type AgentDefinition,
} from './agent-definition.js';
export { agentImage, AGENT_HOME } from './agent-image.js';
export { createAgentNetwork, type AgentNetwork } from './agent-network.js';
export { runAgentCli, type AgentCliRun, type AgentCliResult } from './run-agent-cli.js';
export {
  startRecordingProxy,
  type ProxyLimits,
  type ProxyStop,
  type RecordingProxy,
  type RecordingProxyOptions,
} from './recording-proxy.js';
export type { Exchange } from './exchange.js';
