import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { echoScript, startScriptedServer } from '../../src/testing/index.js';
import type { TrajectoryRecord } from '../../src/trajectory/record.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';
import { scriptedBatchArgs } from '../helpers/batch-run.js';

function batchArgs(dataset: string, run: string, baseUrl: string, extra: string[] = []): string[] {
  return scriptedBatchArgs(dataset, run, baseUrl, 'NO_KEY', ['--workers', '1', '--toolsets', 'file', ...extra]);
}

test('--ephemeral-system-prompt and --prefill reach the model but never the records; the fingerprint holds them', async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(echoScript);
  t.after(() => server.close());
  const dataset = join(directory, 'prompts.jsonl');
  writeFileSync(dataset, `${JSON.stringify({ prompt: 'say hello' })}\n${JSON.stringify({ prompt: 'say bye' })}\n`);
  const ephemeral = join(directory, 'ephemeral.txt');
  writeFileSync(ephemeral, 'SECRET-STYLE-GUIDE: answer in haiku.\n');
  const prefill = join(directory, 'prefill.json');
  writeFileSync(
    prefill,
    JSON.stringify([
      { role: 'user', content: 'PREFILL-QUESTION: what is 1+1?' },
      { role: 'assistant', content: 'PREFILL-ANSWER: 2' },
    ]),
  );
  const args = batchArgs(dataset, 'hidden', server.url, [
    '--ephemeral-system-prompt',
    `@${ephemeral}`,
    '--prefill',
    prefill,
  ]);
  const result = await runCli(args, { cwd: directory });
  assert.equal(result.code, 0, result.stderr);

  const firstCalls = server.requests.filter(
    (request) => !request.messages.slice(3).some((message) => message.role === 'assistant'),
  );
  assert.ok(firstCalls.length >= 2, 'the server saw each rollout');
  for (const request of server.requests) {
    const [system, question, answer] = request.messages;
    assert.equal(system!.role, 'system');
    assert.match(
      String(system!.content),
      /\n\nSECRET-STYLE-GUIDE: answer in haiku\.$/,
      'the ephemeral prompt ends the system prompt sent',
    );
    assert.deepEqual([question!.content, answer!.content], ['PREFILL-QUESTION: what is 1+1?', 'PREFILL-ANSWER: 2']);
  }

  const text = readFileSync(join(directory, 'datasets', 'hidden', 'trajectories.jsonl'), 'utf8');
  assert.ok(!text.includes('SECRET-STYLE-GUIDE') && !text.includes('PREFILL-'), 'neither is saved in any record');
  const records = text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as TrajectoryRecord);
  assert.equal(records.length, 2);
  for (const record of records) {
    assert.deepEqual(
      record.messages.slice(0, 2).map((message) => message.role),
      ['system', 'user'],
    );
    assert.match(String(record.messages[1]!.content), /^say (hello|bye)$/);
  }
  const exported = await runCli(['export', 'hidden', '--format', 'hermes'], { cwd: directory });
  assert.equal(exported.code, 0, exported.stderr);
  assert.ok(
    !readFileSync(join(directory, 'datasets', 'hidden', 'data', 'train-00000-of-00001.jsonl'), 'utf8').includes(
      'SECRET-STYLE-GUIDE',
    ),
  );

  // Another ephemeral prompt makes it another run: refused on resume, naming the change.
  const changed = await runCli(
    batchArgs(dataset, 'hidden', server.url, ['--ephemeral-system-prompt', 'be terse', '--prefill', prefill]),
    { cwd: directory },
  );
  assert.equal(changed.code, 2, changed.stderr);
  assert.match(changed.stderr, /ephemeral_system_prompt: "SECRET-STYLE-GUIDE/);
  const dropped = await runCli(
    batchArgs(dataset, 'hidden', server.url, ['--ephemeral-system-prompt', `@${ephemeral}`]),
    { cwd: directory },
  );
  assert.equal(dropped.code, 2, dropped.stderr);
  assert.match(dropped.stderr, /prefill: "[0-9a-f]{16}" → /);
});

test('--prefill refuses a file that is not an array of messages, naming it', async (t) => {
  const directory = temporaryDirectory(t);
  const dataset = join(directory, 'prompts.jsonl');
  writeFileSync(dataset, `${JSON.stringify({ prompt: 'x' })}\n`);
  const prefill = join(directory, 'bad.json');
  writeFileSync(prefill, JSON.stringify([{ role: 'wizard', content: 'x' }]));
  const result = await runCli(batchArgs(dataset, 'bad', 'http://127.0.0.1:9/v1', ['--prefill', prefill]), {
    cwd: directory,
  });
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /bad\.json/);
  const missing = await runCli(
    batchArgs(dataset, 'bad', 'http://127.0.0.1:9/v1', ['--ephemeral-system-prompt', '@nope.txt']),
    { cwd: directory },
  );
  assert.equal(missing.code, 2, missing.stderr);
  assert.match(missing.stderr, /--ephemeral-system-prompt @nope\.txt: cannot read the file \(ENOENT\)/);
});
