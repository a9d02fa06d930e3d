import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { SUMMARIZER_PROMPT, SUMMARY_MARKER } from '../../src/agent/index.js';
import { toWireMessages } from '../../src/model/index.js';
import { startScriptedServer, type ChatRequest, type Script } from '../../src/testing/index.js';
import { rebuildRequests, TrajectoryRecordSchema, type TrajectoryRecord } from '../../src/trajectory/index.js';
import { projectRoot } from '../../src/util/paths.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';

const isSummary = (request: ChatRequest) => request.messages[0]?.content === SUMMARIZER_PROMPT;

/** Eight terminal steps; the usage grows with the request, so a small window must be compressed. */
const eightSteps: Script = (request) => {
  if (isSummary(request)) return { content: 'Earlier: the agent echoed steps one by one.' };
  const text = request.messages.map((message) => String(message.content ?? '')).join('\n');
  const done = (text.match(/step-\d+/g) ?? []).length;
  const usage = { prompt_tokens: 400 * request.messages.length, completion_tokens: 10 };
  if (done >= 8 || (text.includes(SUMMARY_MARKER) && done >= 4)) return { content: 'all steps done', usage };
  return { tool_calls: [{ name: 'terminal', arguments: { command: `echo step-${done}` } }], usage };
};

function records(directory: string, run: string): TrajectoryRecord[] {
  return readFileSync(join(directory, 'datasets', run, 'trajectories.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => TrajectoryRecordSchema.parse(JSON.parse(line)));
}

test('traj batch: a rollout past the threshold is compressed, finishes, and its requests rebuild from the record', async (t) => {
  const directory = temporaryDirectory(t);
  // The window comes from the server's /v1/models (vLLM's max_model_len), not from the config.
  const server = await startScriptedServer(eightSteps, { contextLength: 8000, model: 'scripted' });
  t.after(() => server.close());
  writeFileSync(join(directory, 'prompts.jsonl'), `${JSON.stringify({ prompt: 'echo eight steps' })}\n`);
  writeFileSync(join(directory, 'run.yaml'), 'compression:\n  threshold: 0.5\n  keep_last_turns: 2\n');
  const args = [
    'batch',
    '--dataset',
    'prompts.jsonl',
    '--run',
    'long',
    '--base-url',
    server.url,
    '--model',
    'scripted',
    '--api-key-env',
    'NO_KEY',
  ];
  const result = await runCli([...args, '--config', 'run.yaml', '--toolsets', 'terminal', '--max-turns', '20'], {
    cwd: directory,
  });
  assert.equal(result.code, 0, result.stderr);
  // Asked once, by the preflight: the worker thread took the window from its answer.
  assert.equal(server.modelListingCount(), 1);
  const [record] = records(directory, 'long');
  assert.equal(record!.finish_reason, 'stop');
  assert.equal(record!.completed, true);
  assert.ok(record!.compressions.length >= 1, 'compressed');
  assert.equal(record!.compressions[0]!.summary, 'Earlier: the agent echoed steps one by one.');
  const received = server.requests.filter((request) => !isSummary(request));
  assert.deepEqual(
    rebuildRequests(record!).map(toWireMessages),
    received.map((request) => request.messages),
  );
  const stats = JSON.parse(readFileSync(join(directory, 'datasets', 'long', 'statistics.json'), 'utf8'));
  assert.deepEqual(stats.compressions, { rollouts: 1, total: record!.compressions.length });
  assert.match(result.stdout + result.stderr, /context compressions: \d+ in 1 rollout/);
});

test('traj batch: auxiliary.summarizer writes the summaries when configured; the main model then writes none', async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(eightSteps, { contextLength: 8000, model: 'scripted' });
  const summarizer = await startScriptedServer(() => ({ content: 'Summary by the auxiliary model.' }), {
    model: 'aux',
  });
  t.after(() => Promise.all([server.close(), summarizer.close()]));
  writeFileSync(join(directory, 'prompts.jsonl'), `${JSON.stringify({ prompt: 'echo eight steps' })}\n`);
  writeFileSync(
    join(directory, 'run.yaml'),
    `compression:\n  threshold: 0.5\n  keep_last_turns: 2\nauxiliary:\n  summarizer:\n    base_url: ${summarizer.url}\n    model: aux\n`,
  );
  const args = [
    'batch',
    '--dataset',
    'prompts.jsonl',
    '--run',
    'aux',
    '--config',
    'run.yaml',
    '--toolsets',
    'terminal',
  ];
  const result = await runCli(
    [...args, '--max-turns', '20', '--base-url', server.url, '--model', 'scripted', '--api-key-env', 'NO_KEY'],
    { cwd: directory },
  );
  assert.equal(result.code, 0, result.stderr);
  const [record] = records(directory, 'aux');
  assert.ok(record!.compressions.length >= 1, 'compressed');
  assert.equal(record!.compressions[0]!.summary, 'Summary by the auxiliary model.');
  assert.equal(server.requests.filter(isSummary).length, 0, 'the main model wrote no summary');
  assert.equal(summarizer.requests.length, record!.compressions.length);
  assert.ok(summarizer.requests.every((request) => isSummary(request) && request.model === 'aux'));
});

test('traj batch: a context-overflow 400 is an agent outcome (context_length), never retried as infrastructure', async (t) => {
  const directory = temporaryDirectory(t);
  const fixture = JSON.parse(
    readFileSync(join(projectRoot(), 'tests', 'fixtures', 'context-overflow', 'openai.json'), 'utf8'),
  );
  const server = await startScriptedServer(() => ({ fault: 'http', status: fixture.status, body: fixture.body }));
  t.after(() => server.close());
  writeFileSync(join(directory, 'prompts.jsonl'), `${JSON.stringify({ prompt: 'a prompt too long' })}\n`);
  const args = [
    'batch',
    '--dataset',
    'prompts.jsonl',
    '--run',
    'over',
    '--base-url',
    server.url,
    '--model',
    'scripted',
    '--api-key-env',
    'NO_KEY',
  ];
  const first = await runCli([...args, '--toolsets', 'terminal', '--max-attempts', '3'], { cwd: directory });
  assert.equal(server.requestCount(), 1, 'one request: no retry of the 400, no second attempt of the rollout');
  const again = await runCli([...args, '--toolsets', 'terminal', '--max-attempts', '3'], { cwd: directory });
  assert.equal(server.requestCount(), 1, 'resuming does not run it again: it is a finished rollout');
  assert.notEqual(first.code, null, first.stderr);
  assert.notEqual(again.code, null);
  const db = new Database(join(directory, 'checkpoints', 'over.sqlite'), { readonly: true });
  t.after(() => db.close());
  const row = db.prepare('SELECT status, error_class, attempts, record FROM items').get() as {
    status: string;
    error_class: string;
    attempts: number;
    record: string;
  };
  assert.equal(row.status, 'done');
  assert.equal(row.error_class, 'agent');
  const record = JSON.parse(row.record) as TrajectoryRecord;
  assert.equal(record.finish_reason, 'context_length');
  assert.equal(record.completed, false);
});
