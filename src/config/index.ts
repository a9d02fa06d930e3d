export * from './endpoint.js';
export * from './load.js';
export * from './home-config.js';
