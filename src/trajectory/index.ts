export * from './build-record.js';
export * from './hermes-template.js';
export * from './python-json.js';
export * from './record.js';
export * from './sharegpt.js';
export * from './statistics.js';
export * from './hermes-record.js';
export * from './python-json-value.js';
