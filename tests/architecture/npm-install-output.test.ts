import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { projectRoot } from '../../src/util/paths.js';
import { temporaryDirectory } from '../helpers/cli.js';

const npm = (cwd: string, args: string[]) =>
  spawnSync('npm', [...args, '--offline', '--no-audit', '--no-fund'], { cwd, encoding: 'utf8' });

/**
 * Where better-sqlite3's prebuilt binary cannot be downloaded, its install script compiles SQLite for
 * minutes; npm hides dependency build scripts' output unless told otherwise, so `npm ci` looked hung
 * (issue 37). The project's .npmrc must make `npm ci` show a dependency's install script as it runs:
 * checked here with the installed npm on a scratch project (a local package whose install script
 * prints a line) that uses the repository's .npmrc.
 */
test("npm ci in this project shows a dependency's install script and its output as it runs", (t) => {
  const directory = temporaryDirectory(t, 'traj-npmrc-');
  const dependency = join(directory, 'builds-natively');
  mkdirSync(dependency);
  writeFileSync(
    join(dependency, 'package.json'),
    JSON.stringify({
      name: 'builds-natively',
      version: '1.0.0',
      scripts: { install: `node -e "console.error('compiling the native part now')"` },
    }),
  );
  const packed = npm(dependency, ['pack', '--silent']);
  assert.equal(packed.status, 0, packed.stderr);
  const project = join(directory, 'project');
  mkdirSync(project);
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({
      name: 'scratch',
      version: '1.0.0',
      private: true,
      dependencies: { 'builds-natively': 'file:../builds-natively/builds-natively-1.0.0.tgz' },
    }),
  );
  copyFileSync(join(projectRoot(), '.npmrc'), join(project, '.npmrc'));
  const locked = npm(project, ['install', '--package-lock-only']);
  assert.equal(locked.status, 0, locked.stderr);
  const installed = npm(project, ['ci']);
  assert.equal(installed.status, 0, installed.stderr);
  const output = installed.stdout + installed.stderr;
  assert.match(output, /> builds-natively@1\.0\.0 install\n> node -e/);
  assert.match(output, /compiling the native part now/);
});
