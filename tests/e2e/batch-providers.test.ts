import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import {
  FOLLOW_UP_USAGE,
  fixtureReplayScript,
  loadProviderFixtures,
  replayPrompt,
  startScriptedServer,
} from '../../src/testing/index.js';
import type { TrajectoryRecord } from '../../src/trajectory/record.js';
import { projectRoot } from '../../src/util/paths.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';

/**
 * One `traj batch` run over every replayable provider fixture (one prompt each, keyed by the
 * fixture's id) and one provider error: what lands in the records, the ShareGPT view,
 * statistics and the store is what each provider sent.
 */
const FIXTURES = loadProviderFixtures(join(projectRoot(), 'tests', 'fixtures', 'providers'));
const ANSWERS = FIXTURES.filter((fixture) => !fixture.expect.error);
const ERROR = FIXTURES.find((fixture) => fixture.id === 'alibaba/error-data-inspection')!;

test('traj batch over every provider fixture keeps content, reasoning, tool calls, finish reasons, usage, cost and error text', async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(fixtureReplayScript(FIXTURES));
  t.after(() => server.close());
  const dataset = join(directory, 'providers.jsonl');
  writeFileSync(
    dataset,
    `${[...ANSWERS, ERROR].map((fixture) => JSON.stringify({ id: fixture.id, prompt: replayPrompt(fixture.id) })).join('\n')}\n`,
  );
  const config = join(directory, 'no-retry.yaml');
  writeFileSync(config, 'endpoint:\n  max_retries: 0\n');
  const args = [
    'batch',
    '--dataset',
    dataset,
    '--run',
    'providers',
    '--base-url',
    server.url,
    '--model',
    'replay',
    '--api-key-env',
    'NO_KEY',
  ];
  const result = await runCli(
    [...args, '--toolsets', 'file', '--max-turns', '3', '--workers', '1', '--concurrency', '8', '--config', config],
    { cwd: directory },
  );
  assert.notEqual(result.code, 0, 'the provider error fails its prompt');

  const records = readFileSync(join(directory, 'datasets', 'providers', 'trajectories.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as TrajectoryRecord);
  assert.deepEqual(
    records.map((record) => record.id).sort(),
    ANSWERS.map((fixture) => fixture.id).sort(),
    result.stderr,
  );
  const finishes: Record<string, number> = {};
  for (const fixture of ANSWERS) {
    const record = records.find((entry) => entry.id === fixture.id)!;
    const { expect } = fixture;
    const turn = record.messages[2]!;
    assert.equal(turn.role, 'assistant', fixture.id);
    if (turn.role !== 'assistant') continue;
    if (expect.content !== undefined) assert.equal(turn.content, expect.content, `${fixture.id}: content`);
    assert.equal(turn.reasoning, expect.reasoning, `${fixture.id}: reasoning`);
    const calls = (turn.tool_calls ?? []).map((call) => ({
      id: call.id,
      name: call.function.name,
      arguments: JSON.parse(call.function.arguments) as unknown,
    }));
    assert.deepEqual(calls, expect.tool_calls ?? [], `${fixture.id}: tool calls`);
    if (expect.signatures)
      assert.deepEqual(
        turn.reasoning_details?.map((detail) => detail.signature),
        expect.signatures,
        `${fixture.id}: signatures`,
      );
    if (expect.images) assert.deepEqual(turn.images, expect.images);

    // A normal stop or tool round ends in stop (after the follow-up answer); any other reason is kept as sent.
    const normal = expect.finish_reason === 'stop' || expect.finish_reason === 'tool_calls';
    assert.equal(record.finish_reason, normal ? 'stop' : expect.finish_reason, `${fixture.id}: finish reason`);
    assert.equal(record.completed, normal, `${fixture.id}: completed`);
    finishes[record.finish_reason] = (finishes[record.finish_reason] ?? 0) + 1;

    const followUps = calls.length > 0 ? 1 : 0;
    const usage = expect.usage!;
    assert.deepEqual(
      record.usage,
      {
        prompt_tokens: usage.prompt_tokens + followUps * FOLLOW_UP_USAGE.prompt_tokens,
        completion_tokens: usage.completion_tokens + followUps * FOLLOW_UP_USAGE.completion_tokens,
        reasoning_tokens: usage.reasoning_tokens,
        cached_tokens: usage.cached_tokens,
        cost: usage.cost,
        // No pricing: here; the follow-up answer reports no cost, so it leaves the model unpriced.
        cost_source: usage.cost === null ? 'unknown' : 'provider',
        unpriced_models: usage.cost === null || followUps > 0 ? ['replay'] : [],
      },
      `${fixture.id}: usage`,
    );

    // The ShareGPT view: the reasoning in the think block, the visible text after it.
    const gpt = record.conversations.find((entry) => entry.from === 'gpt')!.value;
    assert.ok(
      gpt.startsWith(expect.reasoning ? `<think>\n${expect.reasoning}\n</think>\n` : '<think>\n</think>\n'),
      `${fixture.id}: ${gpt}`,
    );
    if (expect.content) assert.ok(gpt.includes(expect.content), `${fixture.id}: sharegpt content`);

    // The request after the tool results carried exactly the record's echo.
    if (followUps) {
      const followUp = server.requests.find(
        (request) =>
          request.messages.some((message) => message.role === 'user' && message.content === replayPrompt(fixture.id)) &&
          request.messages.length > 2,
      )!;
      const sent = followUp.messages[2]!;
      assert.deepEqual(
        Object.keys(sent)
          .filter((key) => !['role', 'content', 'tool_calls'].includes(key))
          .sort(),
        Object.keys(turn.echo ?? {})
          .filter((key) => key !== 'content')
          .sort(),
        fixture.id,
      );
      for (const [key, value] of Object.entries(turn.echo ?? {}))
        assert.deepEqual(sent[key], value, `${fixture.id}: echoed ${key}`);
    }
  }

  const stats = JSON.parse(readFileSync(join(directory, 'datasets', 'providers', 'statistics.json'), 'utf8'));
  assert.deepEqual(stats.finish_reasons, finishes);
  assert.ok(
    stats.finish_reasons.content_filter === 1 && stats.finish_reasons.sensitive === 1,
    JSON.stringify(stats.finish_reasons),
  );
  assert.equal(
    stats.tokens.cached,
    ANSWERS.reduce((sum, fixture) => sum + fixture.expect.usage!.cached_tokens, 0),
  );
  const cost = ANSWERS.reduce((sum, fixture) => sum + (fixture.expect.usage!.cost ?? 0), 0);
  assert.ok(Math.abs(stats.tokens.cost - cost) < 1e-9, `${stats.tokens.cost} vs ${cost}`);
  assert.match(result.stderr + result.stdout, new RegExp(`${stats.tokens.cached} cached`));
  // docs/endpoints.md: the known part and the model left unpriced by the follow-up calls, never a silent $0.
  assert.match(
    result.stdout,
    /^cost: \$[0-9.]+ \+ unknown \(no price known for replay\) \(provider-reported ×\d+\)$/m,
    result.stdout,
  );

  const db = new Database(join(directory, 'checkpoints', 'providers.sqlite'), { readonly: true });
  t.after(() => db.close());
  const failed = db.prepare(`SELECT status, error_message FROM items WHERE key = ?`).get(ERROR.id) as {
    status: string;
    error_message: string;
  };
  assert.equal(failed.status, 'failed');
  assert.ok(failed.error_message.includes(ERROR.expect.error!.contains), failed.error_message);
});
