import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import * as arrow from 'apache-arrow';
import * as parquet from 'parquet-wasm';
import { gsm8kItem, GSM8K_DEV_SIZE } from '../../src/dataset/index.js';
import { sharedDir } from '../../src/util/paths.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';
import { startHubStandIn } from '../helpers/hub-stand-in.js';

/**
 * `traj data fetch`: GSM8K from openai/gsm8k's test Parquet and terminal tasks from a --repo, both
 * downloaded with @huggingface/hub from a local Hub stand-in that speaks its download API.
 */
function gsm8kParquet(rows: number): Buffer {
  const question = Array.from({ length: rows }, (_, index) => `Problem ${index}: what is ${index} + 1000?`);
  const answer = Array.from(
    { length: rows },
    (_, index) => `${index} + 1000 = <<${index}+1000=${index + 1000}>>\n#### ${(index + 1000).toLocaleString('en-US')}`,
  );
  const table = arrow.tableFromArrays({ question, answer });
  const properties = new parquet.WriterPropertiesBuilder().setMaxRowGroupSize(100).build();
  return Buffer.from(parquet.writeParquet(parquet.Table.fromIPCStream(arrow.tableToIPC(table, 'stream')), properties));
}

test('data fetch gsm8k writes the first 300 test problems as ../shared holds them; a second fetch needs --force', async (t) => {
  const hub = await startHubStandIn();
  t.after(() => hub.close());
  hub.seed('openai/gsm8k', { 'main/test-00000-of-00001.parquet': gsm8kParquet(GSM8K_DEV_SIZE + 19) });
  const root = temporaryDirectory(t);
  const env = { HF_TOKEN: hub.token, TRAJ_HOME: join(root, 'home') };
  const args = ['data', 'fetch', 'gsm8k', '--root', join(root, 'data'), '--hub-url', hub.url];
  const first = await runCli(args, { env });
  assert.equal(first.code, 0, first.stderr);
  const file = join(root, 'data', 'datasets', 'gsm8k', 'test-dev.jsonl');
  assert.match(first.stdout, /wrote 300 GSM8K problems to .*test-dev\.jsonl/);
  const lines = readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line));
  assert.equal(lines.length, 300);
  assert.deepEqual(Object.keys(lines[0]), ['id', 'question', 'answer', 'final']);
  assert.deepEqual([lines[0].id, lines[0].final], ['gsm8k-test-0000', '1000']);
  assert.deepEqual([lines[299].id, lines[299].final], ['gsm8k-test-0299', '1299'], 'thousands separators removed');
  assert.ok(hub.requests.some((request) => request.path.includes('/resolve/main/main/test-00000-of-00001.parquet')));
  const again = await runCli(args, { env });
  assert.equal(again.code, 2);
  assert.match(again.stderr, /exists already: pass --force/);
  assert.equal((await runCli([...args, '--force'], { env })).code, 0);
});

test('the GSM8K normalisation gives exactly the lines of ../shared/datasets/gsm8k/test-dev.jsonl', (t) => {
  const shared = join(sharedDir(), 'datasets', 'gsm8k', 'test-dev.jsonl');
  if (!existsSync(shared)) return t.skip(`skipped: no ${shared} (see docs/data.md)`);
  const lines = readFileSync(shared, 'utf8').trimEnd().split('\n');
  assert.equal(lines.length, GSM8K_DEV_SIZE);
  lines.forEach((line, index) => {
    const item = JSON.parse(line) as { question: string; answer: string };
    assert.deepEqual(gsm8kItem(index, item.question, item.answer), JSON.parse(line), `line ${index + 1}`);
  });
});

test('data fetch terminal-tasks copies every file of --repo; without --repo it exits 2 saying there is no default', async (t) => {
  const hub = await startHubStandIn();
  t.after(() => hub.close());
  hub.seed('my-org/tasks', {
    '.gitattributes': '*.parquet filter=lfs\n',
    'dev/hello/task.toml': '[task]\nname = "hello"\n',
    'dev/hello/instruction.md': 'Say hello.\n',
    'dev/hello/solution/solve.sh': '#!/bin/bash\necho hello\n',
  });
  const root = temporaryDirectory(t);
  const env = { HF_TOKEN: hub.token, TRAJ_HOME: join(root, 'home') };
  const base = ['data', 'fetch', 'terminal-tasks', '--root', join(root, 'data'), '--hub-url', hub.url];
  const missing = await runCli(base, { env });
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /give --repo ORG\/NAME \(no default Hub repository is known\)/);
  const fetched = await runCli([...base, '--repo', 'my-org/tasks'], { env });
  assert.equal(fetched.code, 0, fetched.stderr);
  assert.match(fetched.stdout, /wrote 3 files of my-org\/tasks@main to /);
  const folder = join(root, 'data', 'benchmarks', 'terminal-tasks');
  assert.equal(readFileSync(join(folder, 'dev', 'hello', 'instruction.md'), 'utf8'), 'Say hello.\n');
  assert.ok(statSync(join(folder, 'dev', 'hello', 'solution', 'solve.sh')).mode & 0o100, 'scripts stay executable');
  assert.ok(!existsSync(join(folder, '.gitattributes')));
});
