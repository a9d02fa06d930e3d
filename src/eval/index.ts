export * from './environment.js';
export * from './reward-context.js';
export * from './load-environment.js';
export * from './metrics.js';
export * from './report.js';
export { formatEstimate, formatNumber, formatPassAtK, formatReportMarkdown } from './report-markdown.js';
