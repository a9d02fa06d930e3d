/** `traj view`: a local, read-only web app over run stores and chat sessions. */
export { startViewer, isLoopback, type Viewer, type ViewerOptions } from './server.js';
export { RunReader, messagesPattern, type ItemQuery, type ItemPage, type RunSummary } from './run-reader.js';
export { SessionReader, defaultSessionsPath } from './session-reader.js';
