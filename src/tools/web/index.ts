export * from '../network/network-policy.js';
export { fetchUrl, FetchFailure, type FetchedUrl, type FetchLimits } from './fetch-url.js';
export { resolveSearchBackend, searchWith, BACKEND_ORDER, type SearchResult } from './search-backends.js';
export { webSearchTool, WebSearchParameters } from './web-search.js';
export { webExtractTool, WebExtractParameters, type ExtractedPage } from './web-extract.js';
