export * from './endpoint.js';
export * from './load.js';
export * from './compression.js';
