import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Usage } from '../../src/model/messages.js';
import { renderHtmlReport } from '../../src/report/report-html.js';
import { buildReport, writeReport } from '../../src/report/report.js';
import { EvalReportSchema } from '../../src/report/report-schema.js';
import { RunStore } from '../../src/run/store.js';
import { buildRecord } from '../../src/trajectory/build-record.js';
import { answeredResult } from '../helpers/agent-result.js';
import { temporaryDirectory } from '../helpers/cli.js';

function storeWith(
  directory: string,
  rows: {
    key: string;
    sample: number;
    reward: number | null;
    error?: string;
    category: string;
    toolsets: string[];
    cost?: Partial<Usage>;
  }[],
): RunStore {
  const store = RunStore.open(join(directory, 'report.sqlite'));
  store.initRun({
    name: 'report-run',
    kind: 'eval',
    config: {},
    fingerprintParts: { model: 'm', environment: { name: 'toy', version: '3' } },
  });
  for (const row of rows) {
    const record = buildRecord({
      key: row.key,
      sample: row.sample,
      result: answeredResult({ usage: row.cost }),
      tools: [],
      toolsets: row.toolsets,
      model: 'm',
      source: { dataset: 'toy', row: 0, fields: { category: row.category } },
      reward: {
        reward: row.reward,
        scores: {},
        reward_details: row.error ? null : { checked: row.key },
        reward_error: row.error ?? null,
      },
      group: row.key,
    });
    store.markDispatched(row.key, row.sample, 0, row.toolsets);
    store.saveResult({ key: row.key, sample: row.sample, status: 'done', record, reward: row.reward });
  }
  store.markDispatched('broken', 0, 0, []);
  store.saveResult({
    key: 'broken',
    sample: 0,
    status: 'failed',
    record: null,
    errorClass: 'infra',
    errorMessage: 'sandbox died',
  });
  return store;
}

test('buildReport: summary, pass@k, per category and toolsets, reward errors, failed rollouts', (t) => {
  const directory = temporaryDirectory(t);
  // a: 1, 0 (mean .5); b: 1, 1 (mean 1); c: 0, error (mean 0 over 1 scored).
  const store = storeWith(directory, [
    { key: 'a', sample: 0, reward: 1, category: 'easy', toolsets: [] },
    { key: 'a', sample: 1, reward: 0, category: 'easy', toolsets: [] },
    { key: 'b', sample: 0, reward: 1, category: 'easy', toolsets: ['terminal'] },
    { key: 'b', sample: 1, reward: 1, category: 'easy', toolsets: ['terminal'] },
    { key: 'c', sample: 0, reward: 0, category: 'hard', toolsets: [] },
    { key: 'c', sample: 1, reward: null, error: 'reward exploded: no file', category: 'hard', toolsets: [] },
  ]);
  t.after(() => store.close());
  const report = buildReport(store);
  EvalReportSchema.parse(report);
  assert.equal(report.run, 'report-run');
  assert.deepEqual(report.environment, { name: 'toy', version: '3' });
  assert.equal(report.model, 'm');
  const { summary } = report;
  assert.equal(summary.rollouts, 6);
  assert.equal(summary.items, 3);
  assert.equal(summary.scored, 5);
  assert.equal(summary.failed, 1);
  assert.equal(summary.reward_errors, 1);
  assert.equal(summary.samples_per_item, 2);
  assert.equal(summary.mean_reward.value, 0.5); // (0.5 + 1 + 0) / 3
  assert.equal(summary.pass_rate.value, 3 / 5);
  // pass@1: (.5 + 1 + 0)/3; pass@2 only over a and b (c has one scored sample): (1 + 1)/2.
  assert.ok(Math.abs(summary.pass_at_k['1']! - 0.5) < 1e-12);
  assert.equal(summary.pass_at_k['2'], 1);
  assert.deepEqual(summary.tokens, { prompt: 60, completion: 30 });
  assert.deepEqual(
    report.by_category.map((row) => [row.category, row.rollouts, row.mean_reward.value]),
    [
      ['easy', 4, 0.75],
      ['hard', 2, 0],
    ],
  );
  assert.deepEqual(
    report.by_toolsets.map((row) => [row.toolsets, row.rollouts]),
    [
      [[], 4],
      [['terminal'], 2],
    ],
  );
  const errored = report.items.find((item) => item.key === 'c' && item.sample === 1)!;
  assert.equal(errored.reward, null);
  assert.equal(errored.passed, null);
  assert.equal(errored.reward_error, 'reward exploded: no file');

  const files = writeReport(join(directory, 'out'), report);
  assert.deepEqual(EvalReportSchema.parse(JSON.parse(readFileSync(files.json, 'utf8'))).summary.scored, 5);
  const markdown = readFileSync(files.markdown, 'utf8');
  assert.match(markdown, /^# Eval report: report-run/);
  assert.match(markdown, /\| easy \| 4 \| 2 \| 0\.750/);
  assert.match(markdown, /reward exploded: no file/);
});

test('a custom pass threshold changes pass rate but not mean', (t) => {
  const directory = temporaryDirectory(t);
  const store = storeWith(directory, [
    { key: 'a', sample: 0, reward: 0.6, category: 'x', toolsets: [] },
    { key: 'b', sample: 0, reward: 0.4, category: 'x', toolsets: [] },
  ]);
  t.after(() => store.close());
  assert.equal(buildReport(store).summary.pass_rate.value, 0);
  const lenient = buildReport(store, { passThreshold: 0.5 });
  assert.equal(lenient.summary.pass_rate.value, 0.5);
  assert.equal(lenient.summary.mean_reward.value, 0.5);
});

test('float noise around the threshold does not decide a pass', (t) => {
  const directory = temporaryDirectory(t);
  const store = storeWith(directory, [
    { key: 'a', sample: 0, reward: 0.7 - 1e-12, category: 'x', toolsets: [] },
    { key: 'b', sample: 0, reward: 0.69, category: 'x', toolsets: [] },
  ]);
  t.after(() => store.close());
  assert.deepEqual(
    buildReport(store, { passThreshold: 0.7 }).items.map((item) => item.passed),
    [true, false],
  );
});

test('report.md and report.html show the cost, and name a model whose price is unknown instead of a 0', (t) => {
  const directory = temporaryDirectory(t);
  const provider = { cost: 0.25, cost_source: 'provider' as const, unpriced_models: [] };
  const store = storeWith(directory, [
    { key: 'a', sample: 0, reward: 1, category: 'x', toolsets: [], cost: provider },
    { key: 'b', sample: 0, reward: 1, category: 'x', toolsets: [], cost: provider },
    {
      key: 'c',
      sample: 0,
      reward: 0,
      category: 'x',
      toolsets: [],
      cost: { cost: 0.0125, cost_source: 'provider', unpriced_models: ['judge-x'] },
    },
  ]);
  t.after(() => store.close());
  const report = buildReport(store);
  EvalReportSchema.parse(report);
  assert.deepEqual(report.summary.cost, { usd: 0.5125, rollouts_missing_price: 1, unpriced_models: ['judge-x'] });
  assert.deepEqual(
    report.items.map((item) => item.cost),
    [0.25, 0.25, 0.0125],
  );
  const files = writeReport(directory, report);
  assert.match(readFileSync(files.markdown, 'utf8'), /Cost: \$0\.5125 \+ unknown \(no price known for judge-x\)\./);
  const html = renderHtmlReport({ report, records: [] });
  assert.match(html, /data-metric="cost" data-value="0.5125">\$0\.5125 \+ unknown \(no price known for judge-x\)</);
  assert.match(html, /1 rollout left out calls of judge-x/);

  const unpriced = storeWith(temporaryDirectory(t), [
    {
      key: 'a',
      sample: 0,
      reward: 1,
      category: 'x',
      toolsets: [],
      cost: { cost_source: 'unknown', unpriced_models: ['m'] },
    },
  ]);
  t.after(() => unpriced.close());
  const unknown = buildReport(unpriced);
  assert.equal(unknown.summary.cost?.usd, null);
  assert.match(
    renderHtmlReport({ report: unknown, records: [] }),
    /data-metric="cost" data-value="">unknown \(no price known for m\)</,
  );
});
