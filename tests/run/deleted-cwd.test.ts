import assert from 'node:assert/strict';
import { mkdtempSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { writeFileAtomically } from '../../src/util/atomic-write.js';

// A run whose working folder was deleted (a test's scratch folder, a cleaned CI workspace) used to
// spin at 100% CPU for good when it wrote its outputs; it must fail with ENOENT instead.
test('writing outputs after the working folder was deleted fails with ENOENT, not a spin', { timeout: 20_000 }, () => {
  const folder = mkdtempSync(join(tmpdir(), 'traj-deleted-cwd-'));
  const before = process.cwd();
  process.chdir(folder);
  rmdirSync(folder);
  try {
    assert.throws(() => writeFileAtomically(join('datasets', 'run', 'statistics.json'), '{}'), { code: 'ENOENT' });
  } finally {
    process.chdir(before);
  }
});
