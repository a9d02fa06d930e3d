import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { projectRoot } from '../../src/util/paths.js';
import { dockerSuiteOptions } from '../helpers/docker.js';

const SCRIPT = join(projectRoot(), 'scripts', 'build-sandbox-image.sh');
const options = await dockerSuiteOptions();

function runScript(args: string[]) {
  return spawnSync('bash', [SCRIPT, ...args], { encoding: 'utf8', timeout: 60_000 });
}

describe('scripts/build-sandbox-image.sh', () => {
  it('refuses a package list that does not exist, with exit code 2 and the path', () => {
    const result = runScript(['--packages', '/nonexistent/traj-packages.txt', '--tag', 'traj-sandbox:never-built']);
    assert.equal(result.status, 2);
    assert.match(result.stderr, /package list '\/nonexistent\/traj-packages\.txt' not found/);
  });

  it('refuses an option without its value', () => {
    const result = runScript(['--tag']);
    assert.equal(result.status, 2);
    assert.match(result.stderr, /--tag needs a value/);
  });

  it('skips the build when the image already exists', options, () => {
    const result = runScript(['--tag', 'traj-sandbox:bookworm']);
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /traj-sandbox:bookworm already exists/);
  });
});
