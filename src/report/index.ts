/** Everything that reads a finished run store: reports, comparison, reference checks, advantages, rescoring. */
export * from './report-schema.js';
export * from './report.js';
export { formatEstimate, formatNumber, formatPassAtK, formatReportMarkdown } from './report-markdown.js';
export * from './advantages.js';
export * from './rescore.js';
export * from './rescore-run.js';
export * from './reference-check.js';
export * from './run-comparison.js';
export * from './bench-suite.js';
export * from './bench-output.js';
export * from './bench-validation.js';
export * from './finish-eval.js';
export * from './comparison-text.js';
export { renderHtmlReport, type HtmlReportInput, type TranscriptRecord } from './report-html.js';
export * from './html-parts.js';
export {
  findRegistrySuite,
  listRegistry,
  materializeSuite,
  RegistryEntrySchema,
  RegistrySchema,
  type RegistryEntry,
  type SuiteReference,
} from './suite-registry.js';
