export * from './endpoint.js';
export * from './load.js';
