import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { connectDocker } from '../../src/sandbox/docker-engine.js';
import { echoScript, scriptedBatchArgs, startScriptedServer } from '../../src/testing/index.js';
import type { TrajectoryRecord } from '../../src/trajectory/record.js';
import { runCli, startCli, temporaryDirectory } from '../helpers/cli.js';
import { requireDockerOrSkip } from '../helpers/docker.js';

async function containersOf(run: string): Promise<number> {
  const docker = await connectDocker();
  const list = await docker.listContainers({ all: true, filters: JSON.stringify({ label: [`traj.run=${run}`] }) });
  return list.length;
}

function writePrompts(path: string, count: number): void {
  writeFileSync(
    path,
    `${Array.from({ length: count }, (_, index) => JSON.stringify({ prompt: `docker prompt ${index}` })).join('\n')}\n`,
  );
}

function args(dataset: string, run: string, url: string): string[] {
  return scriptedBatchArgs(
    dataset,
    run,
    url,
    'NO_KEY',
    ['--sandbox', 'docker', '--toolsets', 'terminal', '--concurrency', '8'],
    'm',
  );
}

test('traj batch --sandbox docker: 20 prompts at concurrency 8 run in containers and leave none behind', async (t) => {
  if (!(await requireDockerOrSkip(t))) return;
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(echoScript);
  t.after(() => server.close());
  const run = `docker-batch-${process.pid}`;
  const dataset = join(directory, 'prompts.jsonl');
  writePrompts(dataset, 20);
  const result = await runCli(args(dataset, run, server.url), { cwd: directory });
  assert.equal(result.code, 0, result.stderr);
  const records = readFileSync(join(directory, 'datasets', run, 'trajectories.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as TrajectoryRecord);
  assert.equal(records.length, 20);
  for (const record of records) {
    const output = JSON.parse(record.messages.find((message) => message.role === 'tool')!.content as string) as {
      exit_code: number;
      output: string;
    };
    assert.equal(output.exit_code, 0);
    assert.match(output.output, /docker prompt \d+/);
  }
  assert.equal(await containersOf(run), 0);
});

test('traj batch --sandbox docker: SIGKILL mid-run, then the rerun removes the leftovers and finishes', async (t) => {
  if (!(await requireDockerOrSkip(t))) return;
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(echoScript, { latencyMs: 400 });
  t.after(() => server.close());
  const run = `docker-kill-${process.pid}`;
  const dataset = join(directory, 'prompts.jsonl');
  writePrompts(dataset, 20);
  const { child, done } = startCli(args(dataset, run, server.url), { cwd: directory });
  for (let tries = 0; tries < 300 && (await containersOf(run)) < 2; tries++)
    await new Promise((resolve) => setTimeout(resolve, 100));
  child.kill('SIGKILL');
  await done;
  assert.ok((await containersOf(run)) > 0, 'the killed run left containers behind (the case the rerun must clean)');
  const rerun = await runCli(args(dataset, run, server.url), { cwd: directory });
  assert.equal(rerun.code, 0, rerun.stderr);
  const db = new Database(join(directory, 'checkpoints', `${run}.sqlite`), { readonly: true });
  assert.equal(db.prepare(`SELECT COUNT(*) FROM items WHERE status = 'done'`).pluck().get(), 20);
  db.close();
  assert.equal(await containersOf(run), 0);
});
