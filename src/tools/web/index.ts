export * from '../network/network-policy.js';
export { fetchUrl, FetchFailure, type FetchedUrl, type FetchLimits } from './fetch-url.js';
export { resolveSearchBackend, searchWith, BACKEND_ORDER, type SearchResult } from './search-backends.js';
export { webSearchTool, WebSearchParameters } from './web-search.js';
export { webExtractTool, WebExtractParameters } from './web-extract.js';
export type { ExtractedPage } from './extracted-page.js';
