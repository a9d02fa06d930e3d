import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { EvalReportSchema, type EvalReport } from '../../src/report/report-schema.js';
import {
  callTool,
  conversationScript,
  reply,
  startScriptedServer,
  type ChatRequest,
  type ScriptedResponse,
} from '../../src/testing/index.js';
import { TrajectoryRecordSchema, type TrajectoryRecord } from '../../src/trajectory/record.js';
import { sharedDir } from '../../src/util/paths.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';

const GSM8K = join(sharedDir(), 'datasets', 'gsm8k', 'test-dev.jsonl');

function policyArgs(url: string): string[] {
  return ['--base-url', url, '--model', 'policy', '--api-key-env', 'NO_KEY'];
}

function readRecords(directory: string, run: string): TrajectoryRecord[] {
  return readFileSync(join(directory, 'datasets', run, 'trajectories.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => TrajectoryRecordSchema.parse(JSON.parse(line)));
}

function readReport(directory: string, run: string): EvalReport {
  return EvalReportSchema.parse(JSON.parse(readFileSync(join(directory, 'datasets', run, 'report.json'), 'utf8')));
}

const userText = (request: ChatRequest) =>
  String(request.messages.find((message) => message.role === 'user')?.content ?? '');

test('gsm8k: 300 dev problems, a policy answering the reference scores 1.0 on all; a wrong number scores 0.0 on all', async (t) => {
  if (!existsSync(GSM8K)) {
    t.skip(`skipped: ${GSM8K} is absent (../shared beside the checkout holds the GSM8K dev set)`);
    return;
  }
  const references = new Map<string, number>();
  for (const line of readFileSync(GSM8K, 'utf8').split('\n').filter(Boolean)) {
    const row = JSON.parse(line) as { question: string; final: string };
    references.set(row.question.trim(), Number(row.final));
  }
  let offset = 0;
  // The script reads the question from the request and looks its answer up; answers vary in form.
  const server = await startScriptedServer((request) => {
    const question = userText(request).split('\n\nSolve the problem')[0]!.trim();
    const answer = references.get(question);
    if (answer === undefined) return reply('I have not seen this question.');
    const value = answer + offset;
    const forms = [
      `Working it out step by step.\n#### ${value}`,
      `The answer is $${value.toLocaleString('en-US')}.`,
      `So the total is ${value}.0`,
    ];
    return reply(forms[value % 3]!);
  });
  t.after(() => server.close());
  const directory = temporaryDirectory(t);
  const args = (run: string) => [
    'eval',
    '--env',
    'gsm8k',
    '--run',
    run,
    '--dataset',
    GSM8K,
    '--workers',
    '2',
    '--concurrency',
    '96',
    ...policyArgs(server.url),
  ];

  const right = await runCli(args('gsm8k-right'), { cwd: directory });
  assert.equal(right.code, 0, right.stderr);
  const records = readRecords(directory, 'gsm8k-right');
  assert.equal(records.length, 300);
  assert.equal(new Set(records.map((record) => record.id)).size, 300);
  assert.ok(
    records.every((record) => record.reward === 1 && record.reward_error === null),
    JSON.stringify(records.find((record) => record.reward !== 1)?.reward_details),
  );
  assert.deepEqual(records[0]!.tools, [], 'gsm8k offers no tools');
  const report = readReport(directory, 'gsm8k-right');
  assert.equal(report.summary.rollouts, 300);
  assert.equal(report.summary.mean_reward.value, 1);
  assert.equal(report.summary.pass_rate.value, 1);
  assert.deepEqual(report.summary.pass_at_k, { '1': 1 });
  assert.match(right.stdout, /gsm8k 1 · run gsm8k-right/);
  assert.equal(server.requestCount(), 300);

  offset = 1;
  const wrong = await runCli(args('gsm8k-wrong'), { cwd: directory });
  assert.equal(wrong.code, 0, wrong.stderr);
  const wrongRecords = readRecords(directory, 'gsm8k-wrong');
  assert.equal(wrongRecords.length, 300);
  assert.ok(wrongRecords.every((record) => record.reward === 0));
  const sample = wrongRecords[0]!.reward_details as { expected: string; got: string };
  assert.equal(Number(sample.got), Number(sample.expected) + 1);
  assert.equal(readReport(directory, 'gsm8k-wrong').summary.pass_rate.value, 0);
});

/** Every first-turn request for a task alternates right, wrong, right...: each group of 3 samples gets rewards {1, 0, 1}. */
function alternatingFileTaskPolicy() {
  const seen = new Map<string, number>();
  const act = (task: string, right: boolean): ScriptedResponse => {
    if (task.includes('report.txt'))
      return callTool('write_file', { path: 'report.txt', content: right ? '100\n' : '101\n' });
    if (task.includes('evens.txt'))
      return callTool('terminal', { command: `mkdir -p numbers && seq ${right ? 2 : 1} 2 10 > numbers/evens.txt` });
    if (task.includes('count.sh'))
      return callTool('write_file', {
        path: 'count.sh',
        content: right ? "wc -l < data.csv | tr -d ' '\n" : 'echo 0\n',
      });
    return callTool('terminal', { command: `${right ? 'mv' : 'cp'} draft.md final.md && echo approved >> final.md` });
  };
  return conversationScript([
    (request) => {
      const task = userText(request);
      const count = seen.get(task) ?? 0;
      seen.set(task, count + 1);
      return act(task, count % 2 === 0);
    },
    reply('Done: the files are in place.'),
  ]);
}

test('file-task with 3 samples: rewards from sandbox files, groups with advantages summing to 0, pass@k, report; --rescore replays without the policy', async (t) => {
  const server = await startScriptedServer(alternatingFileTaskPolicy());
  t.after(() => server.close());
  const directory = temporaryDirectory(t);
  const result = await runCli(
    [
      'eval',
      '--env',
      'file-task',
      '--run',
      'files',
      '--samples',
      '3',
      '--workers',
      '2',
      '--concurrency',
      '12',
      ...policyArgs(server.url),
    ],
    { cwd: directory },
  );
  assert.equal(result.code, 0, result.stderr);
  const records = readRecords(directory, 'files');
  assert.equal(records.length, 12);
  const groups = new Map<string, TrajectoryRecord[]>();
  for (const record of records) groups.set(record.group!, [...(groups.get(record.group!) ?? []), record]);
  assert.deepEqual([...groups.keys()].sort(), ['approve-draft', 'count-script', 'even-numbers', 'sum-report']);
  for (const [group, members] of groups) {
    assert.deepEqual(members.map((record) => record.sample).sort(), [0, 1, 2]);
    assert.deepEqual(members.map((record) => record.reward).sort(), [0, 1, 1], group);
    const advantages = members.map((record) => record.advantage!);
    assert.ok(Math.abs(advantages.reduce((sum, value) => sum + value, 0)) < 1e-9, `${group}: ${advantages}`);
    // (1 − 2/3) / (√(2/9) + 1e-6) and (0 − 2/3) / (√(2/9) + 1e-6).
    const winner = members.find((record) => record.reward === 1)!.advantage!;
    assert.ok(Math.abs(winner - 1 / 3 / (Math.sqrt(2 / 9) + 1e-6)) < 1e-9);
    const loser = members.find((record) => record.reward === 0)!;
    assert.ok(Math.abs(loser.advantage! + 2 / 3 / (Math.sqrt(2 / 9) + 1e-6)) < 1e-9);
    assert.ok(
      (loser.reward_details as { checks: { ok: boolean }[] }).checks.some((check) => !check.ok),
      'a failed check is kept as evidence',
    );
  }
  const report = readReport(directory, 'files');
  assert.equal(report.summary.items, 4);
  assert.equal(report.summary.samples_per_item, 3);
  assert.ok(Math.abs(report.summary.mean_reward.value! - 2 / 3) < 1e-12);
  // Per item n=3, c=2: pass@1 = 2/3, pass@2 = 1 − C(1,2)/C(3,2) = 1, pass@3 = 1.
  assert.ok(Math.abs(report.summary.pass_at_k['1']! - 2 / 3) < 1e-12);
  assert.equal(report.summary.pass_at_k['2'], 1);
  assert.equal(report.summary.pass_at_k['3'], 1);
  assert.deepEqual(
    report.by_category.map((row) => [row.category, row.rollouts]),
    [
      ['files', 9],
      ['scripts', 3],
    ],
  );
  assert.match(readFileSync(join(directory, 'datasets', 'files', 'report.md'), 'utf8'), /## By category/);
  assert.match(result.stdout, /pass@1 0\.667, pass@2 1\.000, pass@3 1\.000/);

  const policyCalls = server.requestCount();
  const rescored = await runCli(['eval', '--rescore', 'files'], { cwd: directory });
  assert.equal(rescored.code, 0, rescored.stderr);
  assert.equal(server.requestCount(), policyCalls, '--rescore makes no policy calls');
  assert.match(rescored.stderr, /rescored 12 rollouts \(0 reward errors/);
  const after = readRecords(directory, 'files');
  const rewards = (list: TrajectoryRecord[]) =>
    Object.fromEntries(list.map((record) => [`${record.id}#${record.sample}`, record.reward]));
  assert.deepEqual(
    rewards(after),
    rewards(records),
    'replaying the recorded tool calls rebuilds the same sandbox state',
  );
});

test('rubric with a three-judge panel: structured verdicts, agreement in the report; a resume and --rescore reuse cached verdicts', async (t) => {
  const policy = await startScriptedServer((request) => reply(`My answer to: ${userText(request)}`));
  const grades: Record<string, [number, boolean]> = {
    'judge-a': [9, true],
    'judge-b': [8, true],
    'judge-c': [3, false],
  };
  const judges = await startScriptedServer((request) => {
    const [score, pass] = grades[request.model!]!;
    return reply(JSON.stringify({ reasoning: `${request.model}: graded against the rubric`, score, pass }));
  });
  t.after(() => Promise.all([policy.close(), judges.close()]).then(() => undefined));
  const directory = temporaryDirectory(t);
  const args = (extra: string[]) => [
    'eval',
    '--env',
    'rubric',
    '--run',
    'panel',
    '--workers',
    '2',
    '--concurrency',
    '8',
    ...policyArgs(policy.url),
    '--judge-model',
    'judge-a,judge-b,judge-c',
    '--judge-base-url',
    judges.url,
    '--judge-api-key-env',
    'NO_KEY',
    ...extra,
  ];

  const first = await runCli(args([]), { cwd: directory });
  assert.equal(first.code, 0, first.stderr);
  assert.equal(policy.requestCount(), 4);
  assert.equal(judges.requestCount(), 12, '4 items × 3 judges');
  for (const request of judges.requests) {
    assert.equal((request.response_format as { type: string }).type, 'json_schema');
    assert.match(
      String(request.messages[1]!.content),
      /Correctness \(most weight\)/,
      'the rubric file from config.yaml',
    );
  }
  assert.ok(
    judges.requests.some((request) =>
      String(request.messages[1]!.content).includes('<REFERENCE_ANSWER>\n100 °C, which is 212 °F.'),
    ),
  );
  const records = readRecords(directory, 'panel');
  for (const record of records) {
    assert.ok(Math.abs(record.reward! - (0.9 + 0.8 + 0.3) / 3) < 1e-12);
    assert.ok(Math.abs(record.scores.judge_agreement! - 2 / 3) < 1e-12);
    assert.equal(record.scores.judges, 3);
    const details = record.reward_details as { pass: boolean; judges: { model: string; reasoning: string }[] };
    assert.equal(details.pass, true);
    assert.deepEqual(
      details.judges.map((judge) => judge.model),
      ['judge-a', 'judge-b', 'judge-c'],
    );
  }
  const report = readReport(directory, 'panel');
  assert.equal(report.pass_threshold, 0.7);
  assert.equal(report.summary.pass_rate.value, 0, 'a mean of 0.667 is below the 0.7 threshold');
  assert.equal(report.summary.judged, 4);
  assert.ok(Math.abs(report.summary.judge_agreement! - 2 / 3) < 1e-12);
  assert.match(first.stdout, /judge agreement: 0\.667 over 4/);
  const db = new Database(join(directory, 'checkpoints', 'panel.sqlite'), { readonly: true });
  assert.equal(db.prepare('SELECT COUNT(*) FROM judge_cache').pluck().get(), 12);
  db.close();

  // A resume adding a second sample: the policy answers again (the same text), the judges are not asked again.
  const resumed = await runCli(args(['--samples', '2']), { cwd: directory });
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.equal(policy.requestCount(), 8);
  assert.equal(judges.requestCount(), 12, 'cache hit: no second judge call for the same grade');
  const both = readRecords(directory, 'panel');
  assert.equal(both.length, 8);
  assert.ok(
    both.every((record) => record.advantage === 0),
    'equal rewards in a group: advantage 0',
  );

  const rescored = await runCli(['eval', '--rescore', 'panel'], { cwd: directory });
  assert.equal(rescored.code, 0, rescored.stderr);
  assert.equal(policy.requestCount(), 8, '--rescore makes no policy calls');
  assert.equal(judges.requestCount(), 12);
  assert.match(rescored.stderr, /judge: 0 new verdicts, 24 from the cache/);

  grades['judge-d'] = [10, true];
  const newJudge = await runCli(
    [
      'eval',
      '--rescore',
      'panel',
      '--judge-model',
      'judge-d',
      '--judge-base-url',
      judges.url,
      '--judge-api-key-env',
      'NO_KEY',
    ],
    { cwd: directory },
  );
  assert.equal(newJudge.code, 0, newJudge.stderr);
  assert.equal(policy.requestCount(), 8);
  assert.equal(judges.requestCount(), 16, 'one call per distinct (item, response) for the new judge');
  assert.ok(readRecords(directory, 'panel').every((record) => record.reward === 1));

  // A revised rubric regrades with the run's own (now judge-d) panel: new cache keys, new calls.
  const rubric = join(directory, 'strict.md');
  writeFileSync(rubric, 'Only answers citing a source pass.\n');
  const revised = await runCli(['eval', '--rescore', 'panel', '--judge-rubric', rubric], { cwd: directory });
  assert.equal(revised.code, 0, revised.stderr);
  assert.equal(judges.requestCount(), 20);
  assert.ok(
    judges.requests
      .slice(16)
      .every((request) => String(request.messages[1]!.content).includes('Only answers citing a source pass.')),
  );

  // The run is now graded by judge-d with the strict rubric: resuming with the original panel is a changed run.
  const stale = await runCli(args([]), { cwd: directory });
  assert.equal(stale.code, 2, 'a usage or config error exits 2');
  assert.match(stale.stderr, /was started with different settings[\s\S]*judges: .*judge-d/);
  assert.equal(policy.requestCount(), 8);
});

test('a throwing reward is recorded with its message (reward null), counted in the summary and report; --agent noop needs no endpoint', async (t) => {
  const directory = temporaryDirectory(t);
  const module = join(directory, 'flaky-env.mjs');
  writeFileSync(
    module,
    `export default {
      name: 'flaky', version: '2',
      items: () => [1, 2, 3, 4].map((n) => ({ n })),
      id: (item) => 'item-' + item.n,
      prompt: (item) => 'Say the number ' + item.n,
      toolsets: [],
      reward(item, result) {
        if (item.n % 2 === 0) throw new Error('checker crashed on item ' + item.n);
        return { score: 1, details: { said: result.messages.at(-1).content } };
      },
    };\n`,
  );
  const server = await startScriptedServer((request) => reply(userText(request).replace('Say the number', 'Number')));
  t.after(() => server.close());
  const result = await runCli(
    ['eval', '--env', module, '--run', 'flaky', '--workers', '1', '--concurrency', '4', ...policyArgs(server.url)],
    { cwd: directory },
  );
  assert.equal(result.code, 0, result.stderr);
  const records = readRecords(directory, 'flaky');
  assert.deepEqual(records.map((record) => [record.id, record.reward, record.reward_error]).sort(), [
    ['item-1', 1, null],
    ['item-2', null, 'checker crashed on item 2'],
    ['item-3', 1, null],
    ['item-4', null, 'checker crashed on item 4'],
  ]);
  const report = readReport(directory, 'flaky');
  assert.equal(report.summary.reward_errors, 2);
  assert.equal(report.summary.scored, 2);
  assert.equal(report.summary.mean_reward.value, 1, 'errors are not zeros');
  assert.match(result.stdout, /reward errors: 2 \(reward null, not 0\), e\.g\. item-2#0: checker crashed on item 2/);
  const statistics = JSON.parse(readFileSync(join(directory, 'datasets', 'flaky', 'statistics.json'), 'utf8'));
  assert.equal(statistics.rewards.errors, 2);

  // Every reward erroring is a broken environment, not a successful eval.
  const broken = join(directory, 'broken-env.mjs');
  writeFileSync(
    broken,
    readFileSync(module, 'utf8').replace('item.n % 2 === 0', 'true').replace("'flaky'", "'broken'"),
  );
  const allErrored = await runCli(
    ['eval', '--env', broken, '--run', 'broken', '--workers', '1', '--concurrency', '4', ...policyArgs(server.url)],
    { cwd: directory },
  );
  assert.equal(allErrored.code, 1, allErrored.stderr);
  assert.match(allErrored.stderr, /every reward errored \(4\)/);

  const noop = await runCli(
    ['eval', '--env', 'file-task', '--run', 'noop', '--agent', 'noop', '--concurrency', '4', '--workers', '1'],
    { cwd: directory },
  );
  assert.equal(noop.code, 0, noop.stderr);
  const nothing = readRecords(directory, 'noop');
  assert.equal(nothing.length, 4);
  assert.ok(nothing.every((record) => record.reward === 0 && record.api_calls === 0));

  const missing = await runCli(['eval', '--env', 'no-such-env', '--run', 'x'], { cwd: directory });
  assert.equal(missing.code, 2, 'a usage or config error exits 2');
  assert.match(missing.stderr, /unknown environment 'no-such-env'; built-in environments: .*file-task.*gsm8k.*rubric/);
  const stray = await runCli(
    ['eval', '--env', 'gsm8k', '--run', 'x', '--judge-base-url', 'http://127.0.0.1:1/v1', ...policyArgs(server.url)],
    { cwd: directory },
  );
  assert.equal(stray.code, 2);
  assert.match(stray.stderr, /--judge-base-url needs --judge-model/);
});
