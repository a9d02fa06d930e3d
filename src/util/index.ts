export * from './paths.js';
export * from './hash.js';
export * from './shell.js';
export * from './atomic-write.js';
export * from './closest-match.js';
export * from './text-table.js';
export * from './terminal-text.js';
export * from './cost-text.js';
