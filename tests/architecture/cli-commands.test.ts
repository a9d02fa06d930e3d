import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { projectRoot } from '../../src/util/paths.js';

const CLI = join(projectRoot(), 'src', 'cli');

/**
 * A cli/ file is parse → call a room → print. A command's file (one that exports `command`) is
 * loaded by the command table alone (commands.ts, which main.ts dispatches from and the reference
 * generator reads): what two commands share lives in a room or a shared cli/ helper.
 */
test('no cli/ file imports another command’s file (only the command table loads them)', () => {
  const files = readdirSync(CLI).filter((name) => name.endsWith('.ts'));
  const commands = new Set(
    files
      .filter((name) => /^export const command\b/m.test(readFileSync(join(CLI, name), 'utf8')))
      .map((name) => name.replace(/\.ts$/, '')),
  );
  assert.ok(commands.has('batch') && commands.has('eval') && commands.has('bench'), 'the scan finds the command files');
  const offending: string[] = [];
  for (const name of files.filter((file) => file !== 'commands.ts')) {
    const text = readFileSync(join(CLI, name), 'utf8');
    for (const match of text.matchAll(/(?:from|import\()\s*'\.\/([a-z-]+)\.js'/g)) {
      if (commands.has(match[1]!)) offending.push(`${name} imports ./${match[1]}.js`);
    }
  }
  assert.deepEqual(offending, []);
});

/**
 * Run assembly lives in rooms (run/batch-run.ts, run/environment-run.ts, run/single-rollout.ts,
 * report/rescore-run.ts, report/bench-validation.ts): a cli/ file that reaches for the pipeline's
 * parts itself is assembling a run again.
 */
test('no cli/ file assembles a run from the pipeline’s parts', () => {
  const parts = [
    'executeRun',
    'executeRollout',
    'runPipeline',
    'fingerprintParts',
    'rolloutSettings',
    'batchEntries',
    'environmentEntries',
    'createThreadServices',
    'RunStore',
  ];
  const offending: string[] = [];
  for (const name of readdirSync(CLI).filter((file) => file.endsWith('.ts'))) {
    const text = readFileSync(join(CLI, name), 'utf8');
    for (const part of parts) if (new RegExp(`\\b${part}\\b`).test(text)) offending.push(`${name} uses ${part}`);
  }
  assert.deepEqual(offending, []);
});
