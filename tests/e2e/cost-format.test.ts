import assert from 'node:assert/strict';
import { get } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { reply, startScriptedServer } from '../../src/testing/index.js';
import { startViewer } from '../../src/view/index.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';
import { prompts, scriptedBatchArgs, writeJsonl } from '../helpers/batch-run.js';

/**
 * One cost, one text (issue 37: the summary, the progress line, the eval summary, the report and the
 * viewer each wrote it their own way): `$0.024`, `unknown (no price known for M)`, or both joined by ` + `.
 */

function fetchText(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    get(url, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve(body));
    }).on('error', reject);
  });
}

const viewerCost = (html: string, run: string) => {
  const row = new RegExp(`<tr data-run="${run}">.*?</tr>`, 's').exec(html)?.[0] ?? '';
  return /<span class="cost[^"]*" data-field="cost"[^>]*>([^<]*)<\/span>/.exec(row)?.[1];
};

const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The last progress line a run printed on stderr (no TTY: one line every 10 s and one at the end). */
const lastProgress = (stderr: string) =>
  stderr
    .split(/[\r\n]+/)
    .filter((line) => / finished \(done /.test(line))
    .at(-1) ?? '';

test('the summary, progress line, eval summary, report and viewer show a cost in one format', async (t) => {
  // Every call: 1000 prompt + 500 completion tokens; at $2 / $8 per 1M that is $0.006.
  const usage = { usage: { prompt_tokens: 1000, completion_tokens: 500 } };
  const policy = await startScriptedServer(() => reply('my answer', usage));
  const judge = await startScriptedServer(() =>
    reply(JSON.stringify({ reasoning: 'fine', score: 8, pass: true }), usage),
  );
  t.after(() => Promise.all([policy.close(), judge.close()]).then(() => undefined));
  const directory = temporaryDirectory(t);
  const config = join(directory, 'run.yaml');
  writeFileSync(config, 'pricing:\n  policy: { input: 2, output: 8 }\n');
  const partial = '$0.024 + unknown (no price known for judge-a)';

  const evaluation = await runCli(
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
  assert.equal(evaluation.code, 0, evaluation.stderr);
  assert.match(
    evaluation.stdout,
    new RegExp(`^cost: ${literal(partial)} \\(agent, auxiliary models and judges\\)$`, 'm'),
  );
  assert.ok(lastProgress(evaluation.stderr).endsWith(`| spent ${partial}`), lastProgress(evaluation.stderr));
  const report = readFileSync(join(directory, 'datasets', 'judged', 'report.md'), 'utf8');
  assert.ok(report.includes(`Cost: ${partial}.`), report);

  const dataset = join(directory, 'prompts.jsonl');
  writeJsonl(dataset, prompts(3));
  const unpriced = 'unknown (no price known for other)';
  const batch = await runCli(scriptedBatchArgs(dataset, 'blind', policy.url, 'NO_KEY', ['--workers', '1'], 'other'), {
    cwd: directory,
  });
  assert.equal(batch.code, 0, batch.stderr);
  assert.match(batch.stdout, new RegExp(`^cost: ${literal(unpriced)}$`, 'm'));
  assert.ok(lastProgress(batch.stderr).endsWith(`| spent ${unpriced}`), lastProgress(batch.stderr));
  const priced = await runCli(
    scriptedBatchArgs(dataset, 'paid', policy.url, 'NO_KEY', ['--workers', '1', '--config', config], 'policy'),
    { cwd: directory },
  );
  assert.equal(priced.code, 0, priced.stderr);
  assert.match(priced.stdout, /^cost: \$0\.018 \(pricing ×3\)$/m);
  assert.ok(lastProgress(priced.stderr).endsWith('| spent $0.018'), lastProgress(priced.stderr));

  const viewer = await startViewer({
    stores: [],
    checkpointsDir: join(directory, 'checkpoints'),
    sessionsPath: join(directory, 'home', 'sessions.sqlite'),
    host: '127.0.0.1',
    port: 0,
  });
  t.after(() => viewer.close());
  const home = await fetchText(viewer.url);
  assert.equal(viewerCost(home, 'judged'), partial);
  assert.equal(viewerCost(home, 'blind'), unpriced);
  assert.equal(viewerCost(home, 'paid'), '$0.018');
});
