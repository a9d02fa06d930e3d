import assert from 'node:assert/strict';
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { projectRoot } from '../../src/util/paths.js';
import { folderRemovedAtExit } from '../helpers/cli.js';

interface BuildIfStale {
  buildIsDue(inputs: string[], stamp: string): boolean;
}

// npm start/test/bench build only when an input is newer than the last build's stamp.
test('a build is due without a stamp or with an input newer than it, and not otherwise', async () => {
  const script = pathToFileURL(join(projectRoot(), 'scripts', 'build-if-stale.mjs')).href;
  const { buildIsDue } = (await import(script)) as BuildIfStale;
  const folder = folderRemovedAtExit('traj-build-stamp-');
  mkdirSync(join(folder, 'src', 'deep'), { recursive: true });
  const source = join(folder, 'src', 'deep', 'a.ts');
  const stamp = join(folder, '.built');
  writeFileSync(source, 'export {};\n');
  const inputs = [join(folder, 'src'), join(folder, 'missing.json')];
  assert.equal(buildIsDue(inputs, stamp), true, 'no stamp yet');
  writeFileSync(stamp, 'built\n');
  const past = new Date(Date.now() - 60_000);
  utimesSync(source, past, past);
  assert.equal(buildIsDue(inputs, stamp), false, 'nothing changed since');
  const future = new Date(Date.now() + 60_000);
  utimesSync(source, future, future);
  assert.equal(buildIsDue(inputs, stamp), true, 'a nested source changed');
});
