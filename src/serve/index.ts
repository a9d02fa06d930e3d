/** `traj serve`: scored groups for an online RL trainer, over HTTP and as an Atropos environment. */
export { serveEnvironment, type ServeInput } from './serve-run.js';
export { PolicySchema, PolicyBoard, policyEndpoint, type Policy } from './policy.js';
export { PullRequestSchema } from './http-api.js';
export type { ScoredGroup } from './scored-group.js';
export { scoredData } from './atropos-client.js';
export {
  AtroposRegisterEnvSchema,
  AtroposScoredDataSchema,
  type AtroposRegisterEnv,
  type AtroposScoredData,
} from './atropos-models.js';
export { groupKeyFor } from './group-source.js';
