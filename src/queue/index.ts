/** Distributed runs: the BullMQ coordinator (a RolloutRunner) and `traj worker`, over one rollout executor. */
export * from './connection.js';
export * from './run-channel.js';
export * from './coordinator.js';
export * from './worker.js';
export * from './code-version.js';
