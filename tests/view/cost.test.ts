import assert from 'node:assert/strict';
import { get } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Usage } from '../../src/model/messages.js';
import { RunStore } from '../../src/run/store.js';
import { buildRecord } from '../../src/trajectory/build-record.js';
import { startViewer } from '../../src/view/index.js';
import { answeredResult } from '../helpers/agent-result.js';
import { temporaryDirectory } from '../helpers/cli.js';

/** A run store written by the real store code, each rollout with the usage given. */
function writeRun(path: string, name: string, usages: Partial<Usage>[]): void {
  const store = RunStore.open(path);
  store.initRun({ name, kind: 'batch', config: {}, fingerprintParts: { model: 'policy' } });
  store.startSpendCounter();
  usages.forEach((usage, index) => {
    const key = `item-${index}`;
    const record = buildRecord({
      key,
      sample: 0,
      result: answeredResult({ usage }),
      tools: [],
      toolsets: [],
      model: 'policy',
      source: { dataset: 'd', row: index, fields: {} },
    });
    store.markDispatched(key, 0, index, []);
    store.saveResult({ key, sample: 0, status: 'done', record });
  });
  store.close();
}

function fetchText(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    get(url, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve(body));
    }).on('error', reject);
  });
}

const costCell = (html: string, where: RegExp) => {
  const section = where.exec(html)?.[0] ?? '';
  return /<span class="cost[^"]*" data-field="cost"[^>]*>([^<]*)<\/span>/.exec(section)?.[1];
};

test('the viewer shows the recorded cost on the runs, run and trajectory pages; an unpriced model is named', async (t) => {
  const directory = temporaryDirectory(t);
  const checkpoints = join(directory, 'checkpoints');
  const provider = { cost_source: 'provider' as const, unpriced_models: [] };
  writeRun(join(checkpoints, 'paid.sqlite'), 'paid', [
    { cost: 0.25, ...provider },
    { cost: 0.0125, ...provider },
  ]);
  writeRun(join(checkpoints, 'blind.sqlite'), 'blind', [{ cost_source: 'unknown', unpriced_models: ['judge-x'] }]);
  writeRun(join(checkpoints, 'partial.sqlite'), 'partial', [
    { cost: 0.5, cost_source: 'pricing', unpriced_models: ['judge-x'] },
  ]);
  const viewer = await startViewer({
    stores: [],
    checkpointsDir: checkpoints,
    sessionsPath: join(directory, 'home', 'sessions.sqlite'),
    host: '127.0.0.1',
    port: 0,
  });
  t.after(() => viewer.close());

  const home = await fetchText(viewer.url);
  assert.equal(costCell(home, /<tr data-run="paid">.*?<\/tr>/s), '$0.2625');
  assert.equal(costCell(home, /<tr data-run="blind">.*?<\/tr>/s), 'unknown (no price known for judge-x)');
  assert.equal(costCell(home, /<tr data-run="partial">.*?<\/tr>/s), '$0.5 + unknown (no price known for judge-x)');

  const run = await fetchText(new URL('/runs/paid', viewer.url).href);
  assert.equal(costCell(run, /<dl class="facts">.*?<\/dl>/s), '$0.2625');
  assert.equal(
    costCell(await fetchText(new URL('/runs/blind', viewer.url).href), /<dl class="facts">.*?<\/dl>/s),
    'unknown (no price known for judge-x)',
  );

  const item = await fetchText(new URL('/runs/paid/item?key=item-1&sample=0', viewer.url).href);
  assert.equal(costCell(item, /<dl class="facts">.*?<\/dl>/s), '$0.0125');
  assert.match(item, /data-field="cost-source">\(provider\)/);
  const blindItem = await fetchText(new URL('/runs/blind/item?key=item-0&sample=0', viewer.url).href);
  assert.equal(costCell(blindItem, /<dl class="facts">.*?<\/dl>/s), 'unknown (no price known for judge-x)');
});
