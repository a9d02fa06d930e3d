export * from './script.js';
export * from './builders.js';
export * from './conversation-script.js';
export * from './echo-script.js';
export * from './server.js';
export * from './script-file.js';
export * from './fixture-replay.js';
export * from './batch-args.js';
export type { ImageRequest, ReceivedImage } from './image-request.js';
