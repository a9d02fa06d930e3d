import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { projectRoot } from '../../src/util/paths.js';

const CLI = join(projectRoot(), 'src', 'cli');

/**
 * A cli/ file is parse → call a room → print. A command's file (one that exports `command`) is
 * imported by main.ts alone: what two commands share lives in a room or a shared cli/ helper.
 */
test('no cli/ file imports another command’s file (only main.ts loads them)', () => {
  const files = readdirSync(CLI).filter((name) => name.endsWith('.ts'));
  const commands = new Set(
    files
      .filter((name) => /^export const command\b/m.test(readFileSync(join(CLI, name), 'utf8')))
      .map((name) => name.replace(/\.ts$/, '')),
  );
  assert.ok(commands.has('batch') && commands.has('eval') && commands.has('bench'), 'the scan finds the command files');
  const offending: string[] = [];
  for (const name of files.filter((file) => file !== 'main.ts')) {
    const text = readFileSync(join(CLI, name), 'utf8');
    for (const match of text.matchAll(/(?:from|import\()\s*'\.\/([a-z-]+)\.js'/g)) {
      if (commands.has(match[1]!)) offending.push(`${name} imports ./${match[1]}.js`);
    }
  }
  assert.deepEqual(offending, []);
});
