import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { callTool, startScriptedServer, echoScript, type ScriptFunction } from '../../src/testing/index.js';
import { TrajectoryRecordSchema, type TrajectoryRecord } from '../../src/trajectory/record.js';
import { runCli, startCli, temporaryDirectory } from '../helpers/cli.js';
import { prompts, readRecords, scriptedBatchArgs, writeJsonl } from '../helpers/batch-run.js';

function batchArgs(dataset: string, run: string, baseUrl: string, extra: string[] = []): string[] {
  return scriptedBatchArgs(
    dataset,
    run,
    baseUrl,
    'NO_KEY',
    ['--workers', '2', '--concurrency', '8', ...extra],
    'scripted-a',
  );
}

/** Prompts the scripted server saw a first model call for (one per rollout). */
function firstCallPrompts(requests: { messages: { role: string; content?: unknown }[] }[]): string[] {
  return requests
    .filter((request) => !request.messages.some((message) => message.role === 'assistant'))
    .map((request) => String(request.messages.find((message) => message.role === 'user')?.content));
}

test('a 50-prompt batch yields valid records with the exact Hermes ShareGPT shape', async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(echoScript);
  t.after(() => server.close());
  const dataset = join(directory, 'prompts.jsonl');
  writeJsonl(dataset, prompts(50));
  const result = await runCli(batchArgs(dataset, 'fifty', server.url, ['--toolsets', 'terminal,file']), {
    cwd: directory,
  });
  assert.equal(result.code, 0, result.stderr);
  const records = readRecords(directory, 'fifty');
  assert.equal(records.length, 50);
  for (const record of records) {
    TrajectoryRecordSchema.parse(record);
    assert.deepEqual(
      record.conversations.map((turn) => turn.from),
      ['system', 'human', 'gpt', 'tool', 'gpt'],
    );
    const [system, human, call, tool, answer] = record.conversations.map((turn) => turn.value);
    assert.match(
      system!,
      /^You are a function calling AI model\. You are provided with function signatures within <tools><\/tools> XML tags\./,
    );
    assert.match(system!, /<tools>\[\{"name": "terminal", "description": /);
    assert.match(system!, /<tool_call>\n\{"name": <function-name>, "arguments": <args-dict>\}\n<\/tool_call>/);
    assert.ok(system!.endsWith(record.messages[0]!.content as string), 'the real system prompt follows the template');
    assert.equal(human, record.messages[1]!.content);
    assert.match(
      call!,
      /^<think>\nThe user wrote "[^"]+"\. I will echo it with the terminal tool\.\n<\/think>\n<tool_call>\n\{"name": "terminal", "arguments": \{"command": "echo '[^']+'"\}\}\n<\/tool_call>$/,
    );
    assert.match(
      tool!,
      /^<tool_response>\n\{"tool_call_id": "[^"]+", "name": "terminal", "content": \{"exit_code": 0, /,
    );
    assert.match(answer!, /^<think>\n.+\n<\/think>\nThe tool printed: /);
    assert.equal(record.finish_reason, 'stop');
    assert.equal(record.completed, true);
    assert.deepEqual(record.tool_stats, [{ name: 'terminal', calls: 1, ok: 1, errors: 0 }]);
    assert.equal(record.model, 'scripted-a');
  }
  assert.equal(new Set(records.map((record) => record.id)).size, 50);
  const stats = JSON.parse(readFileSync(join(directory, 'datasets', 'fifty', 'statistics.json'), 'utf8'));
  assert.equal(stats.prompts.done, 50);
  assert.equal(stats.tools[0].calls, 50);
  assert.equal(stats.reasoning_coverage, 1);
});

test('duplicate prompts each produce one record; the same seed draws the same toolsets', async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(echoScript);
  t.after(() => server.close());
  const dataset = join(directory, 'dupes.jsonl');
  writeJsonl(dataset, [
    { prompt: 'same' },
    { prompt: 'other' },
    { prompt: 'same' },
    { prompt: 'same' },
    ...prompts(12),
  ]);
  for (const run of ['seed-a', 'seed-b']) {
    const result = await runCli(batchArgs(dataset, run, server.url, ['--distribution', 'balanced', '--seed', '7']), {
      cwd: directory,
    });
    assert.equal(result.code, 0, result.stderr);
  }
  const first = readRecords(directory, 'seed-a');
  const second = readRecords(directory, 'seed-b');
  assert.equal(first.length, 16);
  const same = first.filter((record) => record.messages[1]!.content === 'same');
  assert.equal(same.length, 3);
  assert.deepEqual(same.map((record) => record.id.split('#')[1]).sort(), ['0', '1', '2']);
  const toolsetsByKey = (records: TrajectoryRecord[]) =>
    Object.fromEntries(records.map((record) => [record.id, record.toolsets]));
  assert.deepEqual(toolsetsByKey(first), toolsetsByKey(second));
  assert.ok(
    new Set(first.map((record) => record.toolsets.join('+'))).size > 1,
    'the distribution draws differ between prompts',
  );
});

// A kill ends the process wherever its rollouts run: on worker threads or on the main thread.
for (const workers of ['2', '0'])
  test(`SIGKILL mid-run then rerun: every prompt exactly once, statistics cumulative (--workers ${workers})`, async (t) => {
    await killedRun(t, workers);
  });

async function killedRun(t: TestContext, workers: string): Promise<void> {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(echoScript, { latencyMs: 150 });
  t.after(() => server.close());
  const dataset = join(directory, 'kill.jsonl');
  writeJsonl(dataset, prompts(40));
  const flags = ['--toolsets', 'terminal', '--concurrency', '4', '--workers', workers];
  const { child, done } = startCli(batchArgs(dataset, 'killed', server.url, flags), { cwd: directory });
  const store = join(directory, 'checkpoints', 'killed.sqlite');
  for (let tries = 0; tries < 300; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    try {
      const db = new Database(store, { readonly: true, fileMustExist: true });
      const finished = db.prepare(`SELECT COUNT(*) FROM items WHERE status = 'done'`).pluck().get() as number;
      db.close();
      if (finished >= 6) break;
    } catch {
      // The store does not exist yet.
    }
  }
  child.kill('SIGKILL');
  const killed = await done;
  assert.equal(killed.signal, 'SIGKILL');
  const db = new Database(store, { readonly: true });
  const before = db.prepare(`SELECT COUNT(*) FROM items WHERE status = 'done'`).pluck().get() as number;
  db.close();
  assert.ok(before >= 6 && before < 40, `killed after ${before} prompts`);

  const firstCallsBefore = firstCallPrompts(server.requests).length;
  const rerun = await runCli(batchArgs(dataset, 'killed', server.url, flags), { cwd: directory });
  assert.match(rerun.stderr, workers === '0' ? /on the main thread/ : /2 worker threads/);
  assert.equal(rerun.code, 0, rerun.stderr);
  const records = readRecords(directory, 'killed');
  assert.equal(records.length, 40);
  assert.equal(new Set(records.map((record) => record.id)).size, 40);
  const newRollouts = firstCallPrompts(server.requests).length - firstCallsBefore;
  assert.ok(
    newRollouts <= 40 - before + 4,
    `the rerun ran ${newRollouts} rollouts; only the ${40 - before} unfinished ones (plus at most the 4 in flight at the kill) should run`,
  );
  const stats = JSON.parse(readFileSync(join(directory, 'datasets', 'killed', 'statistics.json'), 'utf8'));
  assert.equal(stats.prompts.done, 40);
  assert.equal(stats.segments, 2);
  assert.ok(stats.tools[0].calls >= 40);
}

test('rows inserted and reordered before a resume: only the new rows run', async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(echoScript);
  t.after(() => server.close());
  const dataset = join(directory, 'grow.jsonl');
  const original = prompts(10);
  writeJsonl(dataset, original);
  assert.equal(
    (await runCli(batchArgs(dataset, 'grow', server.url, ['--toolsets', 'file']), { cwd: directory })).code,
    0,
  );
  const calls = firstCallPrompts(server.requests).length;
  const added = [{ prompt: 'brand new one' }, { prompt: 'brand new two' }];
  writeJsonl(dataset, [added[0], ...original.slice().reverse(), added[1]]);
  const rerun = await runCli(batchArgs(dataset, 'grow', server.url, ['--toolsets', 'file']), { cwd: directory });
  assert.equal(rerun.code, 0, rerun.stderr);
  const ran = firstCallPrompts(server.requests).slice(calls);
  assert.deepEqual(ran.sort(), ['brand new one', 'brand new two']);
  assert.equal(readRecords(directory, 'grow').length, 12);
});

test('a changed model is refused with the diff; --force continues', async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(echoScript);
  t.after(() => server.close());
  const dataset = join(directory, 'model.jsonl');
  writeJsonl(dataset, prompts(3));
  assert.equal(
    (await runCli(batchArgs(dataset, 'drift', server.url, ['--toolsets', 'file']), { cwd: directory })).code,
    0,
  );
  const changed = batchArgs(dataset, 'drift', server.url, ['--toolsets', 'file', '--max-turns', '4']).map((arg) =>
    arg === 'scripted-a' ? 'scripted-b' : arg,
  );
  const refused = await runCli(changed, { cwd: directory });
  assert.equal(refused.code, 2, 'a changed setting is a usage error (exit 2)');
  assert.match(refused.stderr, /run 'drift' was started with different settings/);
  assert.match(refused.stderr, /model: "scripted-a" → "scripted-b"/);
  assert.match(refused.stderr, /max_turns: 10 → 4/);
  assert.match(refused.stderr, /--force/);
  const forced = await runCli([...changed, '--force'], { cwd: directory });
  assert.equal(forced.code, 0, forced.stderr);
  assert.match(forced.stderr, /continuing although settings changed/);
});

test('a dead endpoint fails prompts as infra; a rerun with the endpoint back retries them', async (t) => {
  const directory = temporaryDirectory(t);
  const dataset = join(directory, 'dead.jsonl');
  writeJsonl(dataset, prompts(4));
  const unavailable: ScriptFunction = () => ({
    fault: 'http',
    status: 503,
    body: { error: { message: 'service down for maintenance' } },
  });
  const down = await startScriptedServer(unavailable);
  const url = down.url;
  const failed = await runCli(
    batchArgs(dataset, 'dead', url, ['--toolsets', 'file', '--config', writeConfig(directory)]),
    { cwd: directory },
  );
  await down.close();
  assert.equal(failed.code, 1, failed.stderr);
  assert.match(failed.stderr, /4 prompts failed/);
  const stats = JSON.parse(readFileSync(join(directory, 'datasets', 'dead', 'statistics.json'), 'utf8'));
  assert.equal(stats.prompts.failed, 4);
  assert.deepEqual(stats.prompts.failed_by_class, { infra: 4 });
  const db = new Database(join(directory, 'checkpoints', 'dead.sqlite'), { readonly: true });
  const message = db.prepare(`SELECT error_message FROM items LIMIT 1`).pluck().get() as string;
  db.close();
  assert.match(message, /503/);
  assert.match(message, /service down for maintenance/);

  const up = await startScriptedServer(echoScript, { port: down.port });
  t.after(() => up.close());
  const retried = await runCli(
    batchArgs(dataset, 'dead', up.url, ['--toolsets', 'file', '--config', writeConfig(directory)]),
    { cwd: directory },
  );
  assert.equal(retried.code, 0, retried.stderr);
  assert.equal(readRecords(directory, 'dead').length, 4);
});

function writeConfig(directory: string): string {
  const path = join(directory, 'fast-retry.yaml');
  writeFileSync(path, 'endpoint:\n  max_retries: 1\n');
  return path;
}

test('a malformed JSONL line is an error naming the line; --skip-bad-rows counts it', async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(echoScript);
  t.after(() => server.close());
  const dataset = join(directory, 'bad.jsonl');
  writeFileSync(dataset, '{"prompt": "fine"}\n{"prompt": "broken"\n{"prompt": "also fine"}\n');
  const refused = await runCli(batchArgs(dataset, 'bad', server.url, ['--toolsets', 'file']), { cwd: directory });
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /bad\.jsonl:2/);
  const skipped = await runCli(batchArgs(dataset, 'bad2', server.url, ['--toolsets', 'file', '--skip-bad-rows']), {
    cwd: directory,
  });
  assert.equal(skipped.code, 0, skipped.stderr);
  const stats = JSON.parse(readFileSync(join(directory, 'datasets', 'bad2', 'statistics.json'), 'utf8'));
  assert.equal(stats.prompts.bad_rows, 1);
  assert.equal(stats.prompts.done, 2);
});

test('config typos and unknown toolsets are clear errors', async (t) => {
  const directory = temporaryDirectory(t);
  const config = join(directory, 'typo.yaml');
  writeFileSync(config, 'run: typo\ndataset: x.jsonl\nconcurency: 4\n');
  const typo = await runCli(['batch', '--config', config, '--base-url', 'http://127.0.0.1:9/v1', '--model', 'm'], {
    cwd: directory,
  });
  assert.equal(typo.code, 2, 'a config error exits 2');
  assert.match(typo.stderr, /typo\.yaml: .*concurency/);
  const unknown = await runCli(
    [
      'batch',
      '--run',
      'u',
      '--dataset',
      'x.jsonl',
      '--toolsets',
      'terminal,spreadsheet',
      '--base-url',
      'http://127.0.0.1:9/v1',
      '--model',
      'm',
    ],
    { cwd: directory },
  );
  assert.equal(unknown.code, 2);
  assert.match(
    unknown.stderr,
    /unknown toolset 'spreadsheet'; known toolsets: browser, clarify, code_execution, delegation, file, image_gen, memory, moa, session_search, skills, terminal, todo, vision, web/,
  );
});

// Both places a rollout runs: on the main thread (a light run's default) and on a worker thread.
for (const [workers, where] of [
  ['0', /on the main thread/],
  ['1', /1 worker thread/],
] as const)
  test(`SIGINT: stop dispatching, interrupted rollouts go back to pending, exit 130, resume finishes (--workers ${workers})`, async (t) => {
    await sigintRun(t, workers, where);
  });

async function sigintRun(t: TestContext, workers: string, where: RegExp): Promise<void> {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(echoScript, { latencyMs: 300 });
  t.after(() => server.close());
  const dataset = join(directory, 'sigint.jsonl');
  writeJsonl(dataset, prompts(30));
  const args = batchArgs(dataset, 'sigint', server.url, [
    '--toolsets',
    'terminal',
    '--concurrency',
    '4',
    '--workers',
    workers,
    '--grace-period',
    '0',
  ]);
  const { child, done } = startCli(args, { cwd: directory });
  for (let tries = 0; tries < 200 && server.requests.length < 6; tries++)
    await new Promise((resolve) => setTimeout(resolve, 50));
  child.kill('SIGINT');
  const stopped = await done;
  assert.equal(stopped.code, 130, stopped.stderr);
  assert.match(stopped.stderr, where);
  assert.match(stopped.stderr, /Resume with the same command/);
  const db = new Database(join(directory, 'checkpoints', 'sigint.sqlite'), { readonly: true });
  const counts = Object.fromEntries(
    db.prepare('SELECT status, COUNT(*) FROM items GROUP BY status').raw().all() as [string, number][],
  );
  db.close();
  assert.ok((counts.done ?? 0) < 30, 'the run stopped early');
  assert.equal(counts.failed ?? 0, 0, 'interrupted rollouts are not failures');
  const interruptedStats = JSON.parse(readFileSync(join(directory, 'datasets', 'sigint', 'statistics.json'), 'utf8'));
  assert.equal(
    interruptedStats.prompts.total,
    30,
    'the statistics count the whole dataset, not only the rows read before the stop',
  );
  const shown = interruptedStats.prompts;
  assert.equal(shown.pending, 30 - shown.done - shown.discarded - shown.failed, 'rows never read are still pending');
  assert.ok(shown.pending > 0);
  const resumed = await runCli(args, { cwd: directory });
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.equal(readRecords(directory, 'sigint').length, 30);
}

test('one SIGTERM ends a batch whose rollouts are stuck in tools (a FIFO read, a blocked cat) within 10 s, exit 130', {
  timeout: 120_000,
}, async (t) => {
  const directory = temporaryDirectory(t);
  // Each rollout makes a FIFO, reads it with read_file (refused at once), then blocks in `cat` on it.
  const script: ScriptFunction = (request) => {
    const turns = request.messages.filter((message) => message.role === 'assistant').length;
    if (turns === 0) return callTool('terminal', { command: 'mkfifo p' });
    if (turns === 1) return callTool('read_file', { path: 'p' });
    if (turns === 2) return callTool('terminal', { command: 'cat p', timeout: 600 });
    return { content: 'done' };
  };
  const server = await startScriptedServer(script);
  t.after(() => server.close());
  const dataset = join(directory, 'stuck.jsonl');
  // Every row is dispatched before the signal: the stop must reach rollouts with nothing left to dispatch.
  writeJsonl(dataset, prompts(4));
  const args = batchArgs(dataset, 'stuck', server.url, ['--toolsets', 'terminal,file', '--concurrency', '4']);
  const { child, done } = startCli(args, { cwd: directory });
  t.after(() => child.kill('SIGKILL'));
  // The third request of a rollout carries read_file's answer and is answered with the blocking cat.
  const third = () => server.requests.filter((request) => request.messages.length === 6);
  for (let tries = 0; tries < 1200 && third().length < 4; tries++)
    await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(third().length, 4, 'four rollouts reached the blocking cat');
  for (const request of third())
    assert.match(String(request.messages.at(-1)?.content), /FIFO/, 'read_file of the FIFO answered at once');
  await new Promise((resolve) => setTimeout(resolve, 500));
  const signalled = Date.now();
  child.kill('SIGTERM');
  const stopped = await done;
  const took = Date.now() - signalled;
  assert.equal(stopped.code, 130, stopped.stderr);
  assert.ok(took < 10_000, `SIGTERM took ${took} ms to end the run`);
  const db = new Database(join(directory, 'checkpoints', 'stuck.sqlite'), { readonly: true });
  const counts = Object.fromEntries(
    db.prepare('SELECT status, COUNT(*) FROM items GROUP BY status').raw().all() as [string, number][],
  );
  db.close();
  assert.equal(counts.failed ?? 0, 0, 'interrupted rollouts are not failures');
  assert.equal(counts.done ?? 0, 0);
});

test('--rollout-timeout fails a stuck rollout as infra; --completed-only discards unfinished ones', async (t) => {
  const directory = temporaryDirectory(t);
  const script: ScriptFunction = (request) => {
    const prompt = String(request.messages.find((message) => message.role === 'user')?.content);
    if (prompt.includes('stuck')) return { fault: 'delay', ms: 20_000, then: { content: 'too late' } };
    if (prompt.includes('truncated')) return { content: 'cut off', finish_reason: 'length' };
    return { content: 'fine' };
  };
  const server = await startScriptedServer(script);
  t.after(() => server.close());
  const dataset = join(directory, 'mixed.jsonl');
  writeJsonl(dataset, [{ prompt: 'stuck forever' }, { prompt: 'truncated answer' }, { prompt: 'normal one' }]);
  const result = await runCli(
    batchArgs(dataset, 'mixed', server.url, ['--toolsets', 'file', '--rollout-timeout', '1', '--completed-only']),
    { cwd: directory },
  );
  assert.equal(result.code, 1, result.stderr);
  const db = new Database(join(directory, 'checkpoints', 'mixed.sqlite'), { readonly: true });
  const rows = db.prepare('SELECT status, error_class, error_code, finish_reason FROM items ORDER BY row_index').all();
  db.close();
  assert.deepEqual(rows, [
    { status: 'failed', error_class: 'infra', error_code: 'rollout_timeout', finish_reason: 'aborted' },
    { status: 'discarded', error_class: 'filtered', error_code: 'filtered', finish_reason: 'length' },
    { status: 'done', error_class: null, error_code: null, finish_reason: 'stop' },
  ]);
  assert.equal(readRecords(directory, 'mixed').length, 1);
});
