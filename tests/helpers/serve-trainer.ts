import { startCli } from './cli.js';
import type { ChildProcess } from 'node:child_process';

/** A `traj serve` child process and the URL it said it listens on. */
export interface ServeProcess {
  child: ChildProcess;
  url: string;
  stderr: () => string;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

/** Start `traj serve ARGS` and wait for its "serving on URL" line (or its exit, which fails the test with its output). */
export function startServe(
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<ServeProcess> {
  const { child, done } = startCli(['serve', ...args], options);
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    const onData = () => {
      const match = /serving on (http:\/\/\S+)/.exec(stderr);
      if (!match) return;
      child.stderr!.off('data', onData);
      resolve({ child, url: match[1]!, stderr: () => stderr, done });
    };
    child.stderr!.on('data', onData);
    void done.then((result) =>
      reject(new Error(`traj serve exited (${result.code ?? result.signal}):\n${result.stderr}`)),
    );
  });
}

/** POST JSON and read the JSON answer; a refused or cut connection rejects. */
export async function postJson<T>(url: string, body: unknown, method = 'POST'): Promise<{ status: number; body: T }> {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  // The caller names the answer's shape; its assertions check it.
  return { status: response.status, body: (await response.json()) as T };
}
