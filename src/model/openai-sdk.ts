import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type * as Sdk from 'openai';
import { buildRoot } from '../util/paths.js';

/**
 * The openai SDK, loaded from the single file the build makes of it (scripts/vendor-sdk.mjs): a
 * worker thread then spends ~9 ms on it instead of ~45 ms on the package's 154 modules. Every
 * value of the SDK comes from here, so `instanceof` checks and the client share one copy.
 */
export function vendoredSdk(vendorFolder = join(buildRoot(), 'vendor')): string | undefined {
  try {
    const built = readVersion(join(vendorFolder, 'openai.json'));
    const installed = readVersion(join(dirname(fileURLToPath(import.meta.resolve('openai'))), 'package.json'));
    // Another installed version (npm ci without a build): the package itself, never a stale copy.
    return built === installed ? pathToFileURL(join(vendorFolder, 'openai.js')).href : undefined;
  } catch {
    return undefined;
  }
}

function readVersion(manifest: string): string {
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

/** Where the SDK was loaded from: the one-file copy's URL, or `openai`. */
export const sdkSource = vendoredSdk() ?? 'openai';
const sdk = (await import(sdkSource)) as typeof Sdk;

export const OpenAI = sdk.default;
export type OpenAI = Sdk.default;
export const { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } = sdk;
export type APIError = Sdk.APIError;
