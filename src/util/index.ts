export * from './paths.js';
export * from './hash.js';
