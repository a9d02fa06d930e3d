import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { echoScript, startScriptedServer } from '../../src/testing/index.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';

/** Prompts answered without tools: each rollout is one model request, held by the server for `latencyMs`. */
async function batchAgainstSlowServer(
  t: Parameters<typeof temporaryDirectory>[0],
  prompts: number,
  extra: string[],
  config?: string,
) {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(echoScript, { latencyMs: 1500, record: false });
  t.after(() => server.close());
  const dataset = join(directory, 'prompts.jsonl');
  writeFileSync(
    dataset,
    `${Array.from({ length: prompts }, (_, index) => JSON.stringify({ prompt: `knob ${index}` })).join('\n')}\n`,
  );
  const configArgs: string[] = [];
  if (config) {
    writeFileSync(join(directory, 'run.yaml'), config);
    configArgs.push('--config', join(directory, 'run.yaml'));
  }
  const args = [
    'batch',
    '--dataset',
    dataset,
    '--run',
    'knob',
    '--toolsets',
    'file',
    '--base-url',
    server.url,
    '--model',
    'm',
    '--api-key-env',
    'NO_KEY',
    ...configArgs,
    ...extra,
  ];
  const result = await runCli(args, { cwd: directory });
  assert.equal(result.code, 0, result.stderr);
  return { result, server };
}

test('--concurrency 200 puts 200 model requests in flight: no default caps them below it', {
  timeout: 150_000,
}, async (t) => {
  const { result, server } = await batchAgainstSlowServer(t, 400, ['--concurrency', '200', '--max-turns', '1']);
  assert.equal(server.requestCount(), 400);
  assert.ok(server.maxInFlight() >= 200, `the server saw at most ${server.maxInFlight()} requests at once`);
  assert.ok(server.maxInFlight() <= 200, `more requests (${server.maxInFlight()}) than rollouts in flight`);
  assert.match(result.stderr, /200 rollouts in flight, model requests capped at 200 \(--concurrency\)/);
});

test('an explicit endpoint.concurrency still wins, and the start line says so', { timeout: 150_000 }, async (t) => {
  const config = 'run: knob\nendpoint:\n  concurrency: 10\n';
  const { result, server } = await batchAgainstSlowServer(
    t,
    40,
    ['--concurrency', '200', '--workers', '2', '--max-turns', '1'],
    config,
  );
  assert.equal(server.requestCount(), 40);
  assert.ok(server.maxInFlight() <= 10, `endpoint.concurrency 10, yet the server saw ${server.maxInFlight()} at once`);
  assert.ok(server.maxInFlight() >= 5, `the cap should be used, saw only ${server.maxInFlight()}`);
  assert.match(
    result.stderr,
    /200 rollouts in flight, model requests capped at 10 by endpoint\.concurrency 10, 2 worker threads \(--workers\)/,
  );
});
