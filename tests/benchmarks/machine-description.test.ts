import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { machineDescription } from '../../benchmarks/harness/bare-baseline.js';

/**
 * Benchmark figures name where local sandbox folders went and on what filesystem: creating and
 * deleting a folder per rollout costs ten times more on some than on a tmpfs (docs/performance.md).
 */
test("the machine description names the sandbox folders' temp folder and its filesystem", () => {
  const previous = process.env.TMPDIR;
  // /dev/shm is a tmpfs on Linux; a folder inside it shows that TMPDIR, not /tmp, is what is described.
  const folder = mkdtempSync(join('/dev/shm', 'traj-machine-'));
  try {
    process.env.TMPDIR = folder;
    assert.equal(machineDescription().temp_folder, `${folder} (tmpfs)`);
  } finally {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    rmSync(folder, { recursive: true, force: true });
  }
});
