/** The one streaming reader for batch rows and environment items: JSONL (gzip, BOM), Parquet, Arrow, hf://. */
export { checkDatasetSource, readDataset, type ReadDatasetOptions } from './read-dataset.js';
export { DatasetRowSchema, isBadRow, normaliseRow, type BadRow, type DatasetItem, type DatasetRow } from './row.js';
export { datasetFormat, SUPPORTED_EXTENSIONS, type DatasetFormat } from './format.js';
export {
  downloadHubFile,
  hubCacheDir,
  isHubUrl,
  parseHubUrl,
  HUB_URL_FORM,
  type HubLocation,
  type HubOptions,
} from './hub.js';
export { locate, positionUnit } from './location.js';
export { readItems, type ReadItemsOptions } from './read-items.js';
export { countJsonlRows } from './count-rows.js';
export {
  fetchGsm8k,
  fetchTerminalTasks,
  GSM8K_DEV_SIZE,
  GSM8K_SOURCE,
  gsm8kItem,
  type FetchOptions,
} from './fetch-bundled.js';
