import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  cpSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { projectRoot } from '../../src/util/paths.js';
import { CLI, cliEnvironment, temporaryDirectory } from '../helpers/cli.js';
import { outputMatches, shellExamples, type ShellExample } from '../helpers/doc-blocks.js';

/**
 * The doc-test: every ```sh example of README.md and docs/*.md runs, page by page, in a scratch
 * folder holding a copy of examples/ and datasets/sample/ (and scripts/ and node_modules/, linked),
 * with `traj` on PATH, no model endpoint configured (examples use --scripted-if-unset) and a
 * TRAJ_HOME of its own. Where the page shows output, the output must match it (the conventions are
 * in tests/helpers/doc-blocks.ts).
 */
const BLOCK_TIMEOUT_MS = 180_000;

/** TRAJ_DOC_TEST_PAGES=README.md,docs/batch.md runs only those pages (when writing one). */
function pages(): string[] {
  const only = process.env.TRAJ_DOC_TEST_PAGES;
  if (only) return only.split(',').map((page) => page.trim());
  const docs = readdirSync(join(projectRoot(), 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

/** A folder where a page's examples run as a user's would, in a fresh clone's layout. */
function scratchFolder(t: { after(fn: () => void): void }): { cwd: string; env: NodeJS.ProcessEnv } {
  const root = temporaryDirectory(t, 'traj-doc-test-');
  const bin = join(root, 'bin');
  const cwd = join(root, 'work');
  mkdirSync(bin);
  mkdirSync(join(cwd, 'datasets'), { recursive: true });
  cpSync(join(projectRoot(), 'examples'), join(cwd, 'examples'), { recursive: true });
  cpSync(join(projectRoot(), 'datasets', 'sample'), join(cwd, 'datasets', 'sample'), { recursive: true });
  // The clone's scripts (scripts/build-sandbox-image.sh, …) and installed packages (`npx` finds an MCP server
  // there without the network), read-only by convention: linked, not copied.
  symlinkSync(join(projectRoot(), 'scripts'), join(cwd, 'scripts'));
  symlinkSync(join(projectRoot(), 'node_modules'), join(cwd, 'node_modules'));
  writeFileSync(join(bin, 'traj'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
  chmodSync(join(bin, 'traj'), 0o755);
  const env = cliEnvironment({
    PATH: `${bin}:${process.env.PATH ?? ''}`,
    TRAJ_HOME: join(root, 'home'),
    NO_COLOR: '1',
  });
  return { cwd, env };
}

interface BlockRun {
  code: number | null;
  output: string;
  timedOut: boolean;
}

/** Run one example with bash; stdout and stderr share one file, as on a terminal. Anything it left running is stopped. */
function runBlock(example: ShellExample, cwd: string, env: NodeJS.ProcessEnv): Promise<BlockRun> {
  const outputFile = join(cwd, '..', 'block-output.txt');
  const fd = openSync(outputFile, 'w');
  const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', example.script], {
    cwd,
    env,
    detached: true,
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child.pid!);
  }, BLOCK_TIMEOUT_MS);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      killGroup(child.pid!);
      resolve({ code, output: readFileSync(outputFile, 'utf8'), timedOut });
    });
  });
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGTERM');
  } catch {
    // The group is gone already.
  }
}

function describeFailure(example: ShellExample, run: BlockRun, problem: string): string {
  return [
    `${example.page}:${example.line}: ${problem}`,
    '--- example ---',
    example.script.trimEnd(),
    '--- output ---',
    run.output.trimEnd(),
    ...(example.expectedOutput !== undefined ? ['--- the page shows ---', example.expectedOutput] : []),
  ].join('\n');
}

for (const page of pages()) {
  const examples = shellExamples(page, readFileSync(join(projectRoot(), page), 'utf8'));
  if (examples.length === 0) continue;
  test(`the examples of ${page} run as shown`, async (t) => {
    const { cwd, env } = scratchFolder(t);
    for (const example of examples) {
      const name = `${page}:${example.line}: ${example.script.split('\n')[0]}`;
      if (example.skip) {
        await t.test(name, { skip: example.skip }, () => {});
        continue;
      }
      await t.test(name, async () => {
        const run = await runBlock(example, cwd, env);
        assert.ok(!run.timedOut, describeFailure(example, run, `still running after ${BLOCK_TIMEOUT_MS / 1000} s`));
        assert.equal(
          run.code,
          example.expectedExit,
          describeFailure(example, run, `exit status ${run.code}, the page expects ${example.expectedExit}`),
        );
        if (example.expectedOutput !== undefined)
          assert.ok(
            outputMatches(example.expectedOutput, run.output),
            describeFailure(example, run, 'the output differs from what the page shows'),
          );
      });
    }
  });
}
