import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import { PromptKeyer } from '../../src/run/prompt-key.js';
import { openDatabase } from '../../src/util/sqlite.js';
import { echoScript, startScriptedServer } from '../../src/testing/index.js';
import { CLI, measureCli, scratchDirectory } from './processes.js';
import { scriptedBatchArgs } from '../../src/testing/index.js';

/**
 * Resume of a large run that is almost done: time from starting `traj batch` until the first new
 * rollout reaches the endpoint. The store is made real by a first CLI run (so the fingerprint is
 * the CLI's own), then filled with finished rows for all but `1 - doneShare` of the prompts.
 */
export async function resumeBenchmark(rows = 100_000, doneShare = 0.99): Promise<Record<string, number>> {
  const scratch = scratchDirectory('traj-bench-resume-');
  const server = await startScriptedServer(echoScript, { record: false });
  try {
    const dataset = join(scratch.path, 'prompts.jsonl');
    const out = createWriteStream(dataset);
    for (let index = 0; index < rows; index++) {
      if (!out.write(`${JSON.stringify({ prompt: `resume prompt ${index}` })}\n`)) await once(out, 'drain');
    }
    out.end();
    await once(out, 'finish');
    const args = scriptedBatchArgs(dataset, 'resume', server.url, 'NO_KEY', [
      '--toolsets',
      'file',
      '--concurrency',
      '32',
    ]);
    const first = await measureCli([...args, '--limit', '1'], { cwd: scratch.path });
    if (first.code !== 0) throw new Error(`setup run failed: ${first.stderr}`);

    // Rows go in behind the store's API on purpose: 100,000 finished rows in one transaction.
    const store = openDatabase(join(scratch.path, 'checkpoints', 'resume.sqlite'));
    const keyer = new PromptKeyer();
    const done = Math.floor(rows * doneShare);
    const step = rows / (rows - done);
    const pendingAt = new Set(Array.from({ length: rows - done }, (_, index) => Math.floor(index * step)));
    const insert = store.prepare(
      `INSERT OR REPLACE INTO items (key, sample, row_index, status, attempts, toolsets, record, updated_at) VALUES (?, 0, ?, 'done', 1, '["file"]', '{}', '')`,
    );
    store.transaction(() => {
      for (let index = 0; index < rows; index++) {
        const key = keyer.key({ messages: [{ role: 'user', content: `resume prompt ${index}` }], line: index + 1 });
        if (!pendingAt.has(index)) insert.run(key, index);
      }
    })();
    store.prepare(`DELETE FROM items WHERE row_index = 0`).run();
    store.close();

    const started = performance.now();
    const child = spawn(process.execPath, [CLI, ...args], { cwd: scratch.path, stdio: 'ignore' });
    const firstRequest = await new Promise<number>((resolve, reject) => {
      const poll = setInterval(() => {
        if (server.requestCount() > 1) {
          clearInterval(poll);
          resolve(performance.now() - started);
        }
      }, 2);
      child.once('exit', (code) => {
        clearInterval(poll);
        if (server.requestCount() <= 1) reject(new Error(`traj batch exited ${code} before dispatching`));
      });
    });
    const exit = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    return {
      rows,
      already_done: done,
      to_run: rows - done,
      first_new_rollout_ms: Math.round(firstRequest),
      whole_resume_s: Math.round(performance.now() - started) / 1000,
      exit_code: exit ?? -1,
    };
  } finally {
    await server.close();
    scratch.remove();
  }
}
