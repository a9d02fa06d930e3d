import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { callTool, reply, startScriptedServer, type ChatRequest } from '../../src/testing/index.js';
import type { TrajectoryRecord } from '../../src/trajectory/record.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';
import { startWebStandIn } from '../helpers/web-stand-in.js';

test('traj ask --toolsets web reads a page under the --config network policy', async (t) => {
  const directory = temporaryDirectory(t);
  const site = await startWebStandIn();
  t.after(() => site.close());
  const server = await startScriptedServer((request: ChatRequest) =>
    request.messages.at(-1)?.role === 'tool'
      ? reply('read it')
      : callTool('web_extract', { urls: [`${site.url}/article`] }),
  );
  t.after(() => server.close());
  const config = join(directory, 'tools.yaml');
  writeFileSync(config, stringify({ web: { allow_private: true } }));
  const env = { TRAJ_HOME: join(directory, 'home'), TRAJ_SEARXNG_URL: `${site.url}/searxng` };
  const result = await runCli(
    [
      'ask',
      'read the article',
      '--toolsets',
      'web',
      '--config',
      config,
      '--json',
      '--base-url',
      server.url,
      '--model',
      'agent',
      '--api-key-env',
      'NO_KEY',
    ],
    { env },
  );
  assert.equal(result.code, 0, result.stderr);
  const output = JSON.parse(result.stdout) as { messages: { role: string; content: string }[] };
  assert.match(output.messages.find((message) => message.role === 'tool')!.content, /highest tides in the world/);

  const unconfigured = await runCli(
    [
      'ask',
      'search',
      '--toolsets',
      'web,terminal',
      '--base-url',
      server.url,
      '--model',
      'agent',
      '--api-key-env',
      'NO_KEY',
    ],
    { env: { TRAJ_HOME: join(directory, 'home') } },
  );
  assert.match(
    unconfigured.stderr,
    /warning: web_search \[web\] is not offered: no search backend configured: set TRAJ_SEARXNG_URL/,
  );
});

test('traj eval with --toolsets moa: the panel answers inside a scored rollout; its usage is in the record', async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer((request: ChatRequest) => {
    if (request.model === 'ref-a' || request.model === 'ref-b')
      return reply('6 times 7 is 42', { usage: { prompt_tokens: 1000, completion_tokens: 100 } });
    if (request.model === 'agg') return reply('42', { usage: { prompt_tokens: 1000, completion_tokens: 100 } });
    return request.messages.at(-1)?.role === 'tool'
      ? reply('#### 42', { usage: { prompt_tokens: 10, completion_tokens: 1 } })
      : callTool(
          'mixture_of_agents',
          { user_prompt: 'What is 6 times 7?' },
          { usage: { prompt_tokens: 10, completion_tokens: 1 } },
        );
  });
  t.after(() => server.close());
  const dataset = join(directory, 'gsm.jsonl');
  writeFileSync(
    dataset,
    `${JSON.stringify({ question: 'What is 6 times 7?', answer: '6*7=42\n#### 42', final: '42' })}\n`,
  );
  const config = join(directory, 'run.yaml');
  writeFileSync(
    config,
    stringify({
      auxiliary: { moa: { reference: [{ model: 'ref-a' }, { model: 'ref-b' }], aggregator: { model: 'agg' } } },
    }),
  );
  const result = await runCli(
    [
      'eval',
      '--env',
      'gsm8k',
      '--config',
      config,
      '--run',
      'moa-eval',
      '--dataset',
      dataset,
      '--toolsets',
      'moa',
      '--base-url',
      server.url,
      '--model',
      'agent',
      '--api-key-env',
      'NO_KEY',
    ],
    { cwd: directory, env: { TRAJ_HOME: join(directory, 'home') } },
  );
  assert.equal(result.code, 0, result.stderr);
  const [record] = readFileSync(join(directory, 'datasets', 'moa-eval', 'trajectories.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as TrajectoryRecord);
  assert.equal(record!.reward, 1);
  assert.deepEqual(record!.tool_stats, [{ name: 'mixture_of_agents', calls: 1, ok: 1, errors: 0 }]);
  assert.equal(record!.usage.prompt_tokens, 3020, 'two agent calls plus three inner calls');
  assert.equal(record!.usage.completion_tokens, 302);
});
