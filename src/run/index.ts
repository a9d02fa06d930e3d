/** The run pipeline shared by batch, eval and bench: keys, the store, the pool, outputs. */
export * from './prompt-key.js';
export * from './run-config.js';
export * from './run-setup.js';
export * from './store.js';
export * from './pipeline.js';
export * from './rollout.js';
export * from './pool.js';
export * from './execute-run.js';
export * from './batch.js';
export * from './batch-run.js';
export * from './single-rollout.js';
export * from './environment-entries.js';
export * from './environment-run.js';
export * from './stored-eval.js';
export * from './run-statistics.js';
export * from './outputs.js';
export * from './spend-limit.js';
