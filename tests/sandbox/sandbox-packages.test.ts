import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { projectRoot } from '../../src/util/paths.js';

function packages(file: string): Set<string> {
  return new Set(
    readFileSync(file, 'utf8')
      .split('\n')
      .map((line) => line.replace(/#.*/, '').trim())
      .filter(Boolean),
  );
}

// A fresh clone without ../shared builds its image from scripts/sandbox-packages.txt: it must hold
// every package the shared list gives the bundled terminal tasks, or their oracle fails there.
test('the default image package list holds every package of the shared sandbox image list', (t) => {
  const shared = join(projectRoot(), '..', 'shared', 'sandbox-image', 'packages.txt');
  if (!existsSync(shared)) {
    if (process.env.CI) assert.fail(`${shared} is missing in CI`);
    t.skip('../shared is not beside this checkout');
    return;
  }
  const fallback = packages(join(projectRoot(), 'scripts', 'sandbox-packages.txt'));
  const missing = [...packages(shared)].filter((name) => !fallback.has(name));
  assert.deepEqual(missing, [], 'scripts/sandbox-packages.txt lacks these');
});
