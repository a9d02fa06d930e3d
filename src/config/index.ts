export * from './endpoint.js';
export * from './load.js';
export * from './home-config.js';
export * from './web.js';
export * from './auxiliary.js';
export * from './tool-config.js';
export * from './browser.js';
export * from './delegation.js';
