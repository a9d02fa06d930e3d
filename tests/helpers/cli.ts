import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildRoot } from '../../src/util/paths.js';

export const CLI = join(buildRoot(), 'src', 'cli', 'main.js');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The environment a CLI subprocess gets: no real endpoint configured, unless a test sets one. */
export function cliEnvironment(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    OPENAI_API_KEY: undefined,
    OPENAI_BASE_URL: undefined,
    OPENROUTER_API_KEY: undefined,
    TRAJ_MODEL: undefined,
    ...extra,
  };
  return Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined));
}

/** Start the CLI as a subprocess; `done` resolves with its exit and output. */
export function startCli(
  args: string[],
  options: { cwd?: string; env?: Record<string, string | undefined>; stdin?: string } = {},
): { child: ChildProcess; done: Promise<CliResult> } {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: options.cwd,
    env: cliEnvironment(options.env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  if (options.stdin !== undefined) child.stdin!.end(options.stdin);
  else child.stdin!.end();
  const done = new Promise<CliResult>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done };
}

export function runCli(
  args: string[],
  options: { cwd?: string; env?: Record<string, string | undefined>; stdin?: string } = {},
): Promise<CliResult> {
  return startCli(args, options).done;
}

/** A temporary folder removed after the test. */
const removedAtExit = new Set<string>();

/** A temp folder removed when this test file's process exits: for helpers without a test context. */
export function folderRemovedAtExit(prefix: string): string {
  const directory = mkdtempSync(join(tmpdir(), prefix));
  if (removedAtExit.size === 0)
    process.once('exit', () => {
      for (const folder of removedAtExit) rmSync(folder, { recursive: true, force: true });
    });
  removedAtExit.add(directory);
  return directory;
}

export function temporaryDirectory(t: { after(fn: () => void): void }, prefix = 'traj-test-'): string {
  const directory = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(directory, { recursive: true, force: true }));
  return directory;
}
