import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { stringify } from 'yaml';
import { callTool, reply, startScriptedServer, type ChatRequest } from '../../src/testing/index.js';
import { prompts, readRecords, scriptedBatchArgs, writeJsonl } from '../helpers/batch-run.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';

const QUESTION = { question: 'Which deployment target?', choices: ['staging', 'prod'] };

/** Asks once, then repeats the answer it got, so the final message shows what came back. */
function asker(request: ChatRequest) {
  const last = request.messages.at(-1)!;
  if (last.role !== 'tool') return callTool('clarify', QUESTION);
  return reply(`told: ${(JSON.parse(String(last.content)) as { user_response: string }).user_response}`);
}

test('batch: clarify answers with clarify.answer from TRAJ_HOME/config.yaml, a run config overrides it, the record keeps both sides', async (t) => {
  const directory = temporaryDirectory(t);
  const home = join(directory, 'home');
  mkdirSync(home);
  writeFileSync(join(home, 'config.yaml'), stringify({ clarify: { answer: 'home says staging' } }));
  const runConfig = join(directory, 'run.yaml');
  writeFileSync(runConfig, stringify({ clarify: { answer: 'run config says prod' } }));
  const server = await startScriptedServer(asker);
  t.after(() => server.close());
  const dataset = join(directory, 'prompts.jsonl');
  writeJsonl(dataset, prompts(1));
  const answers: Record<string, string> = {};
  for (const [run, extra] of [
    ['from-home', []],
    ['from-run', ['--config', runConfig]],
  ] as const) {
    const args = scriptedBatchArgs(dataset, run, server.url, 'NO_KEY', ['--toolsets', 'clarify', ...extra]);
    const result = await runCli(args, { cwd: directory, env: { TRAJ_HOME: home } });
    assert.equal(result.code, 0, result.stderr);
    const [record] = readRecords(directory, run);
    const call = record!.messages.find((message) => message.role === 'assistant' && 'tool_calls' in message) as {
      tool_calls: { function: { arguments: string } }[];
    };
    assert.deepEqual(JSON.parse(call.tool_calls[0]!.function.arguments), QUESTION, 'the question is recorded');
    const answer = JSON.parse(String(record!.messages.find((message) => message.role === 'tool')!.content));
    assert.equal(answer.answered_by, 'harness');
    assert.deepEqual(answer.question, QUESTION.question);
    answers[run] = answer.user_response;
    assert.equal(record!.messages.at(-1)!.content, `told: ${answer.user_response}`);
    assert.deepEqual(record!.tool_stats, [{ name: 'clarify', calls: 1, ok: 1, errors: 0 }]);
  }
  assert.deepEqual(answers, { 'from-home': 'home says staging', 'from-run': 'run config says prod' });
});

test('batch: a mistyped clarify section is refused before any rollout, naming the file and the key', async (t) => {
  const directory = temporaryDirectory(t);
  const runConfig = join(directory, 'run.yaml');
  writeFileSync(runConfig, stringify({ clarify: { answr: 'typo' } }));
  const server = await startScriptedServer(asker);
  t.after(() => server.close());
  const dataset = join(directory, 'prompts.jsonl');
  writeJsonl(dataset, prompts(1));
  const args = scriptedBatchArgs(dataset, 'typo', server.url, 'NO_KEY', [
    '--toolsets',
    'clarify',
    '--config',
    runConfig,
  ]);
  const result = await runCli(args, { cwd: directory, env: { TRAJ_HOME: join(directory, 'home') } });
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /run\.yaml/);
  assert.match(result.stderr, /clarify.*answr/);
  assert.equal(server.requestCount(), 0);
});

test('chat: clarify asks the person; piped, the next line answers and a number picks that choice', async (t) => {
  const directory = temporaryDirectory(t);
  const home = join(directory, 'home');
  const server = await startScriptedServer((request) => {
    const user = String(request.messages.filter((message) => message.role === 'user').at(-1)?.content);
    if (user === 'deploy' || user === 'ask freely') {
      const last = request.messages.at(-1)!;
      if (last.role !== 'tool')
        return callTool('clarify', user === 'deploy' ? QUESTION : { question: 'Anything else?' });
      return reply(`told: ${(JSON.parse(String(last.content)) as { user_response: string }).user_response}`);
    }
    return reply(`ok: ${user}`);
  });
  t.after(() => server.close());
  const args = ['chat', '--base-url', server.url, '--model', 'm', '--api-key-env', 'NO_KEY', '--toolsets', 'clarify'];
  const result = await runCli(args, {
    env: { TRAJ_HOME: home },
    stdin: 'deploy\n2\nask freely\n  keep the logs  \nbye\n',
  });
  assert.equal(result.code, 0, result.stderr);
  assert.match(
    result.stdout,
    /^ {2}\? Which deployment target\?\n {4}1\. staging\n {4}2\. prod\n {4}3\. Other \(type your answer\)$/m,
  );
  assert.match(result.stdout, /^told: prod$/m);
  assert.match(result.stdout, /^ {2}\? Anything else\?$/m);
  assert.match(result.stdout, /^told: keep the logs$/m);
  assert.match(result.stdout, /^ok: bye$/m, 'the answers were not taken as chat messages');
  const db = new Database(join(home, 'sessions.sqlite'), { readonly: true });
  t.after(() => db.close());
  const tools = db
    .prepare("SELECT message FROM messages WHERE role = 'tool' ORDER BY position")
    .pluck()
    .all() as string[];
  assert.deepEqual(
    tools.map((message) => JSON.parse(String(JSON.parse(message).content))),
    [
      { ...QUESTION, user_response: 'prod' },
      { question: 'Anything else?', user_response: 'keep the logs' },
    ],
  );
});
