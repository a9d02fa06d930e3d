import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startScriptedServer, type ChatRequest, type ScriptFunction } from '../../src/testing/index.js';
import { TrajectoryRecordSchema } from '../../src/trajectory/index.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';

const userText = (request: ChatRequest) => String(request.messages.find((message) => message.role === 'user')?.content);

/** Each rollout notes its own prompt, views a skill, tries to create one, then answers. */
const script: ScriptFunction = (request, { turn }) => {
  const steps = [
    { name: 'memory', arguments: { action: 'add', target: 'memory', content: `worked on: ${userText(request)}` } },
    { name: 'skill_view', arguments: { name: 'csv-cleanup' } },
    {
      name: 'skill_manage',
      arguments: { action: 'create', name: 'new-one', content: '---\nname: new-one\ndescription: x\n---\nbody\n' },
    },
  ];
  const step = steps[turn];
  if (step) return { tool_calls: [step] };
  return { content: `last tool said: ${String(request.messages.at(-1)?.content)}` };
};

test('batch --memory DIR: each rollout works on a private copy seeded from DIR, the record keeps its final state; --skills is read-only', async (t) => {
  const directory = temporaryDirectory(t);
  const seed = join(directory, 'seed-memory');
  mkdirSync(seed);
  writeFileSync(join(seed, 'MEMORY.md'), 'The repo uses pnpm.\n');
  const skills = join(directory, 'skills');
  mkdirSync(join(skills, 'csv-cleanup'), { recursive: true });
  writeFileSync(
    join(skills, 'csv-cleanup', 'SKILL.md'),
    '---\nname: csv-cleanup\ndescription: Clean CSV files.\n---\nUse pandas.\n',
  );
  writeFileSync(
    join(directory, 'prompts.jsonl'),
    `${['alpha task', 'beta task'].map((prompt) => JSON.stringify({ prompt })).join('\n')}\n`,
  );
  const server = await startScriptedServer(script);
  t.after(() => server.close());
  const args = [
    'batch',
    '--dataset',
    'prompts.jsonl',
    '--run',
    'know',
    '--base-url',
    server.url,
    '--model',
    'scripted',
    '--api-key-env',
    'NO_KEY',
  ];
  const result = await runCli(
    [...args, '--toolsets', 'memory,skills', '--memory', seed, '--skills', skills, '--max-turns', '6'],
    { cwd: directory },
  );
  assert.equal(result.code, 0, result.stderr);
  const records = readFileSync(join(directory, 'datasets', 'know', 'trajectories.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => TrajectoryRecordSchema.parse(JSON.parse(line)));
  assert.equal(records.length, 2);
  for (const record of records) {
    const prompt = String(record.messages[1]!.content);
    assert.deepEqual(
      record.memory,
      { memory: ['The repo uses pnpm.', `worked on: ${prompt}`], user: [] },
      'its own note only, on top of the seed',
    );
    assert.deepEqual(record.skills_viewed, ['csv-cleanup']);
    assert.match(
      String(record.messages[0]!.content),
      /# Memory from earlier sessions\n## Your notes \(memory\)\n- The repo uses pnpm\./,
    );
    assert.match(String(record.messages[0]!.content), /# Skills\n.*\n- csv-cleanup: Clean CSV files\./);
    assert.match(String(record.messages.at(-1)!.content), /skills are read-only in this run/);
  }
  assert.equal(readFileSync(join(seed, 'MEMORY.md'), 'utf8'), 'The repo uses pnpm.\n', 'the seed is never written');
  assert.deepEqual(readdirSync(skills), ['csv-cleanup'], 'no skill was created');

  // The seed memory is part of the run's identity: resuming with another seed is refused.
  writeFileSync(join(seed, 'MEMORY.md'), 'The repo uses yarn.\n');
  const resumed = await runCli(
    [...args, '--toolsets', 'memory,skills', '--memory', seed, '--skills', skills, '--max-turns', '6'],
    { cwd: directory },
  );
  assert.notEqual(resumed.code, 0);
  assert.match(resumed.stderr, /knowledge/);
});

test('batch without --memory: the memory tool says it is off and the record has memory null', async (t) => {
  const directory = temporaryDirectory(t);
  writeFileSync(join(directory, 'prompts.jsonl'), `${JSON.stringify({ prompt: 'gamma' })}\n`);
  const server = await startScriptedServer((request, { turn }) =>
    turn === 0
      ? { tool_calls: [{ name: 'memory', arguments: { action: 'add', target: 'memory', content: 'x' } }] }
      : { content: String(request.messages.at(-1)?.content) },
  );
  t.after(() => server.close());
  const args = [
    'batch',
    '--dataset',
    'prompts.jsonl',
    '--run',
    'off',
    '--base-url',
    server.url,
    '--model',
    'scripted',
    '--api-key-env',
    'NO_KEY',
  ];
  const result = await runCli([...args, '--toolsets', 'memory'], { cwd: directory });
  assert.equal(result.code, 0, result.stderr);
  const record = TrajectoryRecordSchema.parse(
    JSON.parse(readFileSync(join(directory, 'datasets', 'off', 'trajectories.jsonl'), 'utf8').trim()),
  );
  assert.equal(record.memory, null);
  assert.match(String(record.messages.at(-1)!.content), /memory is not enabled in this run/);
});
