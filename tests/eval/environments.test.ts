import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadEnvironment } from '../../src/eval/load-environment.js';
import { keyedItems, type KeyedEnvironmentItem } from '../../src/run/environment-entries.js';
import { executeRollout, type RolloutSettings } from '../../src/run/rollout.js';
import { createThreadServices } from '../../src/run/worker-services.js';
import {
  callTool,
  conversationScript,
  reply,
  startScriptedServer,
  type ChatRequest,
  type ScriptedResponse,
} from '../../src/testing/index.js';
import { buildRoot } from '../../src/util/paths.js';
import { temporaryDirectory } from '../helpers/cli.js';
import { scriptedRolloutSettings } from '../helpers/rollout-settings.js';

const FILE_TASK = join(buildRoot(), 'environments', 'file-task', 'index.js');

function settings(baseUrl: string, environmentModule: string): RolloutSettings {
  return scriptedRolloutSettings(baseUrl, 'environments-test', { environmentModule });
}

/** A policy that acts on each file task by its instruction: right or deliberately wrong. */
function fileTaskPolicy(wrong: boolean) {
  const actions: [RegExp, ScriptedResponse][] = [
    [/report\.txt/, callTool('write_file', { path: 'report.txt', content: wrong ? '99\n' : '100\n' })],
    [
      /evens\.txt/,
      callTool('terminal', {
        command: `mkdir -p numbers && printf '${wrong ? '2\\n4\\n6\\n8\\n' : '2\\n4\\n6\\n8\\n10\\n'}' > numbers/evens.txt`,
      }),
    ],
    [
      /count\.sh/,
      callTool('write_file', { path: 'count.sh', content: wrong ? 'echo 6\n' : "wc -l < data.csv | tr -d ' '\n" }),
    ],
    [
      /draft\.md/,
      callTool('terminal', {
        command: wrong
          ? 'cp draft.md final.md && echo approved >> final.md'
          : 'mv draft.md final.md && echo approved >> final.md',
      }),
    ],
  ];
  return conversationScript([
    (request: ChatRequest) => {
      const task = String(request.messages.find((message) => message.role === 'user')?.content);
      return actions.find(([pattern]) => pattern.test(task))?.[1] ?? reply('I do not know this task');
    },
    reply('Done.'),
  ]);
}

async function runFileTasks(wrong: boolean, t: { after(fn: () => Promise<void>): void }) {
  const server = await startScriptedServer(fileTaskPolicy(wrong));
  t.after(() => server.close());
  const environment = await loadEnvironment(FILE_TASK);
  const items: KeyedEnvironmentItem[] = [];
  for await (const keyed of keyedItems(environment, {})) items.push(keyed);
  const services = createThreadServices();
  const outcomes = await Promise.all(
    items.map((keyed) =>
      executeRollout(
        {
          key: keyed.key,
          sample: 0,
          toolsets: ['terminal', 'file'],
          messages: keyed.messages,
          item: keyed.item,
          settings: settings(server.url, FILE_TASK),
        },
        services,
        new AbortController().signal,
      ),
    ),
  );
  return { outcomes, keys: items.map((keyed) => keyed.key), server };
}

test('file-task: the reward reads the files the agent wrote; the right files score 1.0', async (t) => {
  const { outcomes, keys } = await runFileTasks(false, t);
  assert.deepEqual(keys, ['sum-report', 'even-numbers', 'count-script', 'approve-draft']);
  for (const outcome of outcomes) {
    assert.equal(outcome.error, undefined, JSON.stringify(outcome.error));
    assert.equal(outcome.result.finishReason, 'stop');
    assert.equal(outcome.reward?.reward, 1, `${outcome.key}: ${JSON.stringify(outcome.reward)}`);
    assert.equal(outcome.reward?.reward_error, null);
  }
  const report = outcomes[0]!.reward!.reward_details as {
    files: string[];
    checks: { check: string; ok: boolean; actual: string }[];
  };
  assert.deepEqual(report.files, ['report.txt']);
  assert.deepEqual(report.checks, [{ check: 'first line of report.txt', ok: true, expected: '100', actual: '100' }]);
  const draft = outcomes[3]!.reward!.reward_details as { files: string[] };
  assert.deepEqual(draft.files, ['final.md']);
});

test('file-task: wrong files score 0.0 and the details say what was expected and found', async (t) => {
  const { outcomes } = await runFileTasks(true, t);
  for (const outcome of outcomes) assert.equal(outcome.reward?.reward, 0, outcome.key);
  const byKey = Object.fromEntries(outcomes.map((outcome) => [outcome.key, outcome.reward!]));
  assert.deepEqual((byKey['sum-report']!.reward_details as { checks: unknown[] }).checks, [
    { check: 'first line of report.txt', ok: false, expected: '100', actual: '99' },
  ]);
  assert.deepEqual((byKey['even-numbers']!.reward_details as { checks: { actual: string[] }[] }).checks[0]!.actual, [
    '2',
    '4',
    '6',
    '8',
  ]);
  assert.deepEqual((byKey['count-script']!.reward_details as { checks: { actual: string; ok: boolean }[] }).checks[0], {
    check: '`bash count.sh` prints 7',
    ok: false,
    expected: '7',
    actual: '6',
  });
  const approve = byKey['approve-draft']!;
  assert.deepEqual(
    (approve.reward_details as { checks: { ok: boolean }[] }).checks.map((check) => check.ok),
    [false, true],
  );
  assert.equal(approve.scores.checks_passed, 0.5);
});

test('a throwing or hanging reward is recorded with its message: reward null, never a silent 0', async (t) => {
  const directory = temporaryDirectory(t);
  const module = join(directory, 'broken-env.mjs');
  writeFileSync(
    module,
    `export default {
      name: 'broken', version: '1',
      items: () => [{ id: 'throws' }, { id: 'hangs' }, { id: 'nan' }],
      id: (item) => item.id,
      prompt: (item) => 'say ' + item.id,
      toolsets: [],
      rewardTimeoutMs: 200,
      reward(item) {
        if (item.id === 'throws') throw new Error('grader crashed: expected file out.txt');
        if (item.id === 'hangs') return new Promise(() => {});
        return NaN;
      },
    };\n`,
  );
  const server = await startScriptedServer(conversationScript([reply('ok')]));
  t.after(() => server.close());
  const services = createThreadServices();
  const outcomes = await Promise.all(
    ['throws', 'hangs', 'nan'].map((id) =>
      executeRollout(
        {
          key: id,
          sample: 0,
          toolsets: [],
          messages: [{ role: 'user', content: `say ${id}` }],
          item: { id },
          settings: settings(server.url, module),
        },
        services,
        new AbortController().signal,
      ),
    ),
  );
  assert.deepEqual(
    outcomes.map((outcome) => [outcome.key, outcome.error, outcome.reward?.reward, outcome.reward?.reward_error]),
    [
      ['throws', undefined, null, 'grader crashed: expected file out.txt'],
      ['hangs', undefined, null, 'reward timed out after 200 ms'],
      ['nan', undefined, null, 'reward returned NaN'],
    ],
  );
});

test('a reward that asks for a judge in a run without one gets a message saying how to configure it', async (t) => {
  const directory = temporaryDirectory(t);
  const module = join(directory, 'judged-env.mjs');
  writeFileSync(
    module,
    `export default { name: 'judged', version: '1', items: () => [{}], prompt: () => 'hi', toolsets: [], reward: (item, result, context) => context.judge() };\n`,
  );
  const server = await startScriptedServer(conversationScript([reply('hello')]));
  t.after(() => server.close());
  const outcome = await executeRollout(
    {
      key: 'k',
      sample: 0,
      toolsets: [],
      messages: [{ role: 'user', content: 'hi' }],
      item: {},
      settings: settings(server.url, module),
    },
    createThreadServices(),
    new AbortController().signal,
  );
  assert.equal(outcome.reward?.reward, null);
  assert.match(outcome.reward!.reward_error!, /asks for an LLM judge but the run has none: pass --judge-model/);
});
