import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RunStatistics } from '../../src/run/run-statistics.js';
import {
  callTool,
  callTools,
  reply,
  startScriptedServer,
  TINY_PNG_BASE64,
  type ChatRequest,
} from '../../src/testing/index.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';
import { prompts, readRecords, scriptedBatchArgs, writeJsonl } from '../helpers/batch-run.js';

const userText = (request: ChatRequest) =>
  String(request.messages.find((message) => message.role === 'user')?.content ?? '');

function readStatistics(directory: string, run: string): RunStatistics {
  return JSON.parse(readFileSync(join(directory, 'datasets', run, 'statistics.json'), 'utf8')) as RunStatistics;
}

function batch(directory: string, run: string, url: string, count: number, extra: string[] = []): string[] {
  const dataset = join(directory, `${run}.jsonl`);
  writeJsonl(dataset, prompts(count));
  return scriptedBatchArgs(
    dataset,
    run,
    url,
    'NO_KEY',
    ['--workers', '1', '--concurrency', '4', ...extra],
    'scripted-a',
  );
}

/** Prompt number N of `prompts()`. */
const promptNumber = (request: ChatRequest) => Number(/number (\d+):/.exec(userText(request))?.[1]);

test('provider-reported usage.cost is summed exactly into records, statistics and the summary', async (t) => {
  // Costs no binary fraction holds exactly: a float sum of them drifts unless it is rounded.
  const costs = [0.0125, 0.25, 0.001, 0.1, 0.2, 0.0003];
  const server = await startScriptedServer((request) =>
    reply('hello', { usage: { prompt_tokens: 10, completion_tokens: 3, cost: costs[promptNumber(request)]! } }),
  );
  t.after(() => server.close());
  const directory = temporaryDirectory(t);
  const result = await runCli(batch(directory, 'provider', server.url, costs.length, ['--toolsets', 'file']), {
    cwd: directory,
  });
  assert.equal(result.code, 0, result.stderr);
  const records = readRecords(directory, 'provider');
  assert.equal(records.length, costs.length);
  for (const record of records) {
    const index = Number(/number (\d+):/.exec(String(record.messages[1]!.content))![1]);
    assert.equal(record.usage.cost, costs[index]);
    assert.equal(record.usage.cost_source, 'provider');
    assert.deepEqual(record.usage.unpriced_models, []);
  }
  const stats = readStatistics(directory, 'provider');
  assert.equal(stats.cost.usd, 0.5638, 'the sum of the scripted costs, exactly');
  assert.equal(stats.tokens.cost, 0.5638);
  assert.equal(stats.cost.spent_usd, 0.5638);
  assert.deepEqual(stats.cost.sources, { provider: 6, pricing: 0, mixed: 0, unknown: 0 });
  assert.deepEqual(stats.cost.unpriced_models, []);
  assert.match(result.stdout, /^cost: \$0\.5638 \(provider-reported ×6\)$/m);
  assert.match(result.stderr, /spent \$0\.5638/, 'the progress line shows the running spend');
});

test('a price table computes the cost from tokens, cached prompt tokens at cached_input', async (t) => {
  const server = await startScriptedServer(() =>
    reply('hello', { usage: { prompt_tokens: 1000, completion_tokens: 500, cached_tokens: 400 } }),
  );
  t.after(() => server.close());
  const directory = temporaryDirectory(t);
  const config = join(directory, 'run.yaml');
  writeFileSync(config, 'pricing:\n  scripted-a: { input: 2, output: 8, cached_input: 0.5 }\n');
  const result = await runCli(batch(directory, 'priced', server.url, 4, ['--config', config]), { cwd: directory });
  assert.equal(result.code, 0, result.stderr);
  // (600 × $2 + 400 × $0.5 + 500 × $8) / 1M = $0.0054 a call, one call a rollout.
  for (const record of readRecords(directory, 'priced')) {
    assert.equal(record.usage.cost, 0.0054);
    assert.equal(record.usage.cost_source, 'pricing');
  }
  const stats = readStatistics(directory, 'priced');
  assert.equal(stats.cost.usd, 0.0216);
  assert.deepEqual(stats.cost.sources, { provider: 0, pricing: 4, mixed: 0, unknown: 0 });
  assert.match(result.stdout, /^cost: \$0\.0216 \(pricing ×4\)$/m);

  // Prices are not part of the fingerprint: a corrected price resumes (landed rollouts keep their cost).
  writeFileSync(config, 'pricing:\n  scripted-a: { input: 4, output: 8, cached_input: 0.5 }\n');
  const dataset = join(directory, 'priced.jsonl');
  writeJsonl(dataset, prompts(5));
  const resumed = await runCli(
    scriptedBatchArgs(dataset, 'priced', server.url, 'NO_KEY', ['--workers', '1', '--config', config], 'scripted-a'),
    { cwd: directory },
  );
  assert.equal(resumed.code, 0, resumed.stderr);
  // The fifth prompt at the new input price: (600 × $4 + 400 × $0.5 + 500 × $8) / 1M = $0.0066.
  assert.equal(readStatistics(directory, 'priced').cost.usd, 0.0282);
});

test('the provider figure wins over the price table; cached_input defaults to input', async (t) => {
  const server = await startScriptedServer((request) =>
    promptNumber(request) === 0
      ? reply('hello', { usage: { prompt_tokens: 1000, completion_tokens: 0, cost: 0.5 } })
      : reply('hello', { usage: { prompt_tokens: 1000, completion_tokens: 0, cached_tokens: 1000 } }),
  );
  t.after(() => server.close());
  const directory = temporaryDirectory(t);
  const config = join(directory, 'run.yaml');
  writeFileSync(config, 'pricing:\n  scripted-a: { input: 3, output: 1 }\n');
  const result = await runCli(batch(directory, 'both', server.url, 2, ['--config', config]), { cwd: directory });
  assert.equal(result.code, 0, result.stderr);
  const stats = readStatistics(directory, 'both');
  // 0.5 from the provider + 1000 cached tokens at input's $3 / 1M.
  assert.equal(stats.cost.usd, 0.503);
  assert.deepEqual(stats.cost.sources, { provider: 1, pricing: 1, mixed: 0, unknown: 0 });
});

test('a model with no price and no provider cost is named, never a silent 0', async (t) => {
  const server = await startScriptedServer(() =>
    reply('hello', { usage: { prompt_tokens: 10, completion_tokens: 2 } }),
  );
  t.after(() => server.close());
  const directory = temporaryDirectory(t);
  const config = join(directory, 'run.yaml');
  writeFileSync(config, 'pricing:\n  some-other-model: { input: 1, output: 1 }\n');
  const result = await runCli(batch(directory, 'unpriced', server.url, 3, ['--config', config]), { cwd: directory });
  assert.equal(result.code, 0, result.stderr);
  for (const record of readRecords(directory, 'unpriced')) {
    assert.equal(record.usage.cost, null);
    assert.equal(record.usage.cost_source, 'unknown');
    assert.deepEqual(record.usage.unpriced_models, ['scripted-a']);
  }
  const stats = readStatistics(directory, 'unpriced');
  assert.equal(stats.cost.usd, null);
  assert.deepEqual(stats.cost.unpriced_models, ['scripted-a']);
  assert.equal(stats.cost.rollouts_missing_price, 3);
  assert.deepEqual(stats.cost.sources, { provider: 0, pricing: 0, mixed: 0, unknown: 3 });
  assert.match(result.stdout, /^cost: unknown \(no price known for scripted-a\)$/m);
  assert.match(result.stdout, /3 rollout\(s\) have a partial or unknown cost: add scripted-a under pricing:/);
  assert.doesNotMatch(result.stdout, /cost: \$0\b/);
});

test('a bad pricing entry is a config error naming the file and the field', async (t) => {
  const directory = temporaryDirectory(t);
  const config = join(directory, 'run.yaml');
  writeFileSync(config, 'pricing:\n  scripted-a: { input: 2, ouput: 8 }\n');
  const result = await runCli(batch(directory, 'typo', 'http://127.0.0.1:9/v1', 1, ['--config', config]), {
    cwd: directory,
  });
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /run\.yaml/);
  assert.match(result.stderr, /pricing\.scripted-a/);
  assert.match(result.stderr, /ouput/);
  writeFileSync(config, 'pricing:\n  scripted-a: { input: -1, output: 8 }\n');
  const negative = await runCli(batch(directory, 'typo', 'http://127.0.0.1:9/v1', 1, ['--config', config]), {
    cwd: directory,
  });
  assert.equal(negative.code, 2, negative.stderr);
  assert.match(negative.stderr, /pricing\.scripted-a\.input/);
  assert.match(negative.stderr, /cannot be negative/);
  const flag = await runCli(batch(directory, 'typo', 'http://127.0.0.1:9/v1', 1, ['--max-cost', 'ten']), {
    cwd: directory,
  });
  assert.equal(flag.code, 2, flag.stderr);
  assert.match(flag.stderr, /--max-cost: expected an amount in USD greater than 0/);
});

test("a judge's calls are part of the rollout's cost, a rescore's new judge calls too", async (t) => {
  const policy = await startScriptedServer(() =>
    reply('my answer', { usage: { prompt_tokens: 100, completion_tokens: 10, cost: 0.01 } }),
  );
  const judge = await startScriptedServer(() =>
    reply(JSON.stringify({ reasoning: 'fine', score: 8, pass: true }), {
      usage: { prompt_tokens: 1000, completion_tokens: 100 },
    }),
  );
  t.after(() => Promise.all([policy.close(), judge.close()]).then(() => undefined));
  const directory = temporaryDirectory(t);
  const config = join(directory, 'run.yaml');
  // The judge has no provider cost: its price comes from the table. 1000 × $1 + 100 × $10 per 1M = $0.002.
  writeFileSync(config, 'pricing:\n  judge-a: { input: 1, output: 10 }\n  judge-b: { input: 2, output: 20 }\n');
  const result = await runCli(
    [
      'eval',
      '--env',
      'rubric',
      '--run',
      'judged',
      '--config',
      config,
      '--workers',
      '1',
      '--base-url',
      policy.url,
      '--model',
      'policy',
      '--api-key-env',
      'NO_KEY',
      '--judge-model',
      'judge-a',
      '--judge-base-url',
      judge.url,
      '--judge-api-key-env',
      'NO_KEY',
    ],
    { cwd: directory },
  );
  assert.equal(result.code, 0, result.stderr);
  const records = readRecords(directory, 'judged');
  assert.equal(records.length, 4);
  assert.equal(judge.requestCount(), 4);
  for (const record of records) {
    assert.equal(record.usage.cost, 0.012, 'policy $0.01 + judge $0.002');
    assert.equal(record.usage.cost_source, 'mixed');
    assert.equal(record.usage.prompt_tokens, 1100, "the judge's tokens are counted too");
  }
  const stats = readStatistics(directory, 'judged');
  assert.equal(stats.cost.usd, 0.048);
  assert.match(result.stdout, /^cost: \$0\.048 \(agent, auxiliary models and judges\)$/m);
  const report = JSON.parse(readFileSync(join(directory, 'datasets', 'judged', 'report.json'), 'utf8'));
  assert.deepEqual(report.summary.cost, { usd: 0.048, rollouts_missing_price: 0, unpriced_models: [] });
  assert.match(readFileSync(join(directory, 'datasets', 'judged', 'report.md'), 'utf8'), /Cost: \$0\.048\./);
  assert.deepEqual(stats.cost.sources, { provider: 0, pricing: 0, mixed: 4, unknown: 0 });

  // A rescore by another judge priced in the run's table: 1000 × $2 + 100 × $20 per 1M = $0.004 a rollout more.
  const rescored = await runCli(
    [
      'eval',
      '--rescore',
      'judged',
      '--judge-model',
      'judge-b',
      '--judge-base-url',
      judge.url,
      '--judge-api-key-env',
      'NO_KEY',
    ],
    { cwd: directory },
  );
  assert.equal(rescored.code, 0, rescored.stderr);
  assert.equal(judge.requestCount(), 8);
  for (const record of readRecords(directory, 'judged')) {
    assert.equal(record.usage.cost, 0.016, 'policy $0.01 + first judge $0.002 + rescore judge $0.004');
    assert.equal(record.usage.prompt_tokens, 2100);
  }
  const after = readStatistics(directory, 'judged');
  assert.equal(after.cost.usd, 0.064);
  assert.equal(after.cost.spent_usd, 0.064, "the run's spend counts the rescore's judge calls");
});

test('--max-cost stops dispatch with exit 5, keeps what landed, and a higher limit resumes each prompt exactly once', async (t) => {
  const seen: number[] = [];
  const server = await startScriptedServer((request) => {
    seen.push(promptNumber(request));
    return reply('hello', { usage: { prompt_tokens: 10, completion_tokens: 2, cost: 0.1 } });
  });
  t.after(() => server.close());
  const directory = temporaryDirectory(t);
  const args = (limit: string) =>
    batch(directory, 'capped', server.url, 10, ['--concurrency', '2', '--max-cost', limit]);

  const first = await runCli(args('0.35'), { cwd: directory });
  assert.equal(first.code, 5, first.stderr);
  assert.match(first.stderr, /stopped dispatching: spend \$0\.4 reached the --max-cost limit of \$0\.35/);
  assert.match(first.stderr, /rerun with a higher --max-cost to continue/);
  const landed = readRecords(directory, 'capped');
  // Four landings reach $0.35; the one still in flight then lands too (concurrency 2).
  assert.ok(landed.length >= 4 && landed.length <= 5, `landed ${landed.length}`);
  assert.equal(seen.length, landed.length, 'nothing was dispatched after the limit but what was in flight');
  const firstStats = readStatistics(directory, 'capped');
  assert.equal(firstStats.prompts.done, landed.length);
  assert.equal(firstStats.cost.spent_usd, landed.length / 10);

  const again = await runCli(args('0.35'), { cwd: directory });
  assert.equal(again.code, 5, again.stderr);
  assert.equal(seen.length, landed.length, 'the same limit spends nothing more: the earlier spend counts');
  assert.match(again.stderr, /--max-cost \$0\.35: the run has spent \$0\.[45] so far/);

  const rest = await runCli(args('5'), { cwd: directory });
  assert.equal(rest.code, 0, rest.stderr);
  assert.deepEqual(
    [...seen].sort((a, b) => a - b),
    Array.from({ length: 10 }, (_, index) => index),
    'each prompt ran exactly once over the three invocations',
  );
  const records = readRecords(directory, 'capped');
  assert.equal(records.length, 10);
  assert.equal(new Set(records.map((record) => record.id)).size, 10);
  const stats = readStatistics(directory, 'capped');
  assert.equal(stats.cost.usd, 1);
  assert.equal(stats.cost.spent_usd, 1);
  assert.equal(stats.segments, 3);
});

test('--max-cost with a model of unknown cost stops at the first such rollout and says which model', async (t) => {
  const server = await startScriptedServer(() =>
    reply('hello', { usage: { prompt_tokens: 10, completion_tokens: 2 } }),
  );
  t.after(() => server.close());
  const directory = temporaryDirectory(t);
  const result = await runCli(batch(directory, 'blind', server.url, 8, ['--concurrency', '1', '--max-cost', '1']), {
    cwd: directory,
  });
  assert.equal(result.code, 5, result.stderr);
  assert.match(result.stderr, /--max-cost \$1\.00 cannot be kept: no price known for model scripted-a/);
  assert.equal(readRecords(directory, 'blind').length, 1);
});

test('auxiliary models (vision, mixture-of-agents) and a delegate_task sub-agent are in the rollout cost', async (t) => {
  const aux = { usage: { prompt_tokens: 100, completion_tokens: 10 } };
  const agent = { usage: { prompt_tokens: 1000, completion_tokens: 100 } };
  const server = await startScriptedServer((request) => {
    const model = request.model ?? '';
    if (model !== 'agent') return reply(`${model} says 16 m`, aux);
    const system = String(request.messages[0]?.content ?? '');
    if (system.startsWith('You are a sub-agent')) return reply('child: done', agent);
    const turn = request.messages.filter((message) => message.role === 'assistant').length;
    if (turn === 0)
      return callTools(
        [
          {
            name: 'vision_analyze',
            arguments: { image_url: `data:image/png;base64,${TINY_PNG_BASE64}`, question: 'what is shown?' },
          },
          { name: 'mixture_of_agents', arguments: { user_prompt: 'How high is the tide?' } },
        ],
        agent,
      );
    if (turn === 1) return callTool('delegate_task', { goal: 'check the tide table' }, agent);
    return reply('The tide rises about 16 m.', agent);
  });
  t.after(() => server.close());
  const directory = temporaryDirectory(t);
  const config = join(directory, 'run.yaml');
  writeFileSync(
    config,
    [
      'auxiliary:',
      '  vision: { model: vision-x }',
      '  moa: { reference: [{ model: ref-a }, { model: ref-b }], aggregator: { model: agg } }',
      'pricing:',
      '  agent: { input: 1, output: 2 }',
      '  vision-x: { input: 10, output: 10 }',
      '  ref-a: { input: 10, output: 10 }',
      '  ref-b: { input: 10, output: 10 }',
      '  agg: { input: 10, output: 10 }',
      '',
    ].join('\n'),
  );
  const dataset = join(directory, 'aux.jsonl');
  writeJsonl(dataset, prompts(2));
  const result = await runCli(
    scriptedBatchArgs(
      dataset,
      'aux',
      server.url,
      'NO_KEY',
      ['--config', config, '--toolsets', 'vision,moa,delegation', '--workers', '1'],
      'agent',
    ),
    { cwd: directory, env: { TRAJ_HOME: join(directory, 'home') } },
  );
  assert.equal(result.code, 0, result.stderr);
  for (const record of readRecords(directory, 'aux')) {
    assert.equal(record.finish_reason, 'stop', JSON.stringify(record.error));
    assert.equal(record.subagents?.length, 1, 'the sub-agent ran');
    // Agent: 3 calls + the sub-agent's 1, each (1000 × $1 + 100 × $2) / 1M = $0.0012;
    // vision 1 + MoA 3 calls, each (100 × $10 + 10 × $10) / 1M = $0.0011.
    assert.equal(record.usage.cost, 0.0092);
    assert.equal(record.usage.cost_source, 'pricing');
    assert.deepEqual(record.usage.unpriced_models, []);
  }
  assert.equal(readStatistics(directory, 'aux').cost.usd, 0.0184);
});

test('--help documents --max-cost and the pricing key on batch, eval and bench', async () => {
  for (const command of ['batch', 'eval', 'bench']) {
    const help = await runCli([command, '--help']);
    assert.equal(help.code, 0, help.stderr);
    assert.match(
      help.stdout,
      /--max-cost USD +stop dispatching once the run's total spend reaches USD: every invocation/,
    );
    assert.match(help.stdout, /pricing: \{ MODEL: \{ input, output, cached_input \} \} in USD per 1M tokens/);
    assert.match(help.stdout, /cached_input defaults to input/);
  }
});
