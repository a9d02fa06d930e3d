import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after } from 'node:test';
import { ConfigError } from '../../src/errors.js';

/**
 * A scratch folder, removed when the test file ends, and a writer of text files in it (folders
 * made as needed) that returns the file's path. Call it at a test file's top level.
 */
export function scratchFiles(prefix: string): { folder: string; write(name: string, text: string): string } {
  const folder = mkdtempSync(join(tmpdir(), prefix));
  after(() => rmSync(folder, { recursive: true, force: true }));
  const write = (name: string, text: string): string => {
    const file = join(folder, name);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    return file;
  };
  return { folder, write };
}

/** The ConfigError `run` throws; fails the test when it throws another error or none. */
export function configErrorOf(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected a ConfigError');
}
