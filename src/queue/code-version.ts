import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { projectRoot } from '../util/paths.js';

let cached: string | undefined;

/**
 * This build's code version: the package version plus a hash of every compiled source file. A worker
 * built from other code would run other rollouts than the coordinator keyed and fingerprinted, so the
 * two must agree before a worker takes a run's jobs.
 */
export function codeVersion(): string {
  if (cached) return cached;
  const sourceRoot = fileURLToPath(new URL('..', import.meta.url));
  const hash = createHash('sha256');
  for (const file of javascriptFiles(sourceRoot)) {
    hash.update(relative(sourceRoot, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  const { version } = JSON.parse(readFileSync(join(projectRoot(), 'package.json'), 'utf8')) as { version: string };
  cached = `${version}+${hash.digest('hex').slice(0, 16)}`;
  return cached;
}

function javascriptFiles(directory: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(directory, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) files.push(...javascriptFiles(path));
    else if (entry.name.endsWith('.js')) files.push(path);
  }
  return files;
}
