import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { batchEntries } from '../../src/run/batch.js';
import type { PipelineEntry, WorkItem } from '../../src/run/work-item.js';
import { RunStore } from '../../src/run/store.js';
import { loadToolRegistry } from '../../src/tools/builtin.js';
import { temporaryDirectory } from '../helpers/cli.js';

async function collect(entries: AsyncIterable<PipelineEntry>): Promise<WorkItem[]> {
  const out: WorkItem[] = [];
  for await (const entry of entries) if (!('bad' in entry)) out.push(entry);
  return out;
}

test('an unavailable toolset is dropped from every draw and each drop is counted', async (t) => {
  const directory = temporaryDirectory(t);
  const dataset = join(directory, 'rows.jsonl');
  writeFileSync(
    dataset,
    `${Array.from({ length: 20 }, (_, index) => JSON.stringify({ prompt: `row ${index}` })).join('\n')}\n`,
  );
  // The built-in web toolset, with no search backend configured in this environment.
  const registry = await loadToolRegistry();
  const store = RunStore.open(join(directory, 'store.sqlite'));
  t.after(() => store.close());
  const warnings: string[] = [];
  const items = await collect(
    batchEntries({
      dataset,
      reader: {},
      choice: { distribution: { name: 'web-heavy', toolsets: { web: 1, file: 0.5 } } },
      seed: 3,
      registry,
      store,
      onDrop: (toolset, reason) => warnings.push(`${toolset}: ${reason}`),
      availability: { env: {} },
    }),
  );
  assert.equal(items.length, 20);
  for (const item of items) {
    assert.ok(!item.task.toolsets.includes('web'));
    assert.ok(item.task.toolsets.length > 0, 'a draw left empty falls back to the most probable available toolset');
  }
  assert.equal(warnings.length, 20);
  assert.match(warnings[0]!, /^web: web_search: no search backend configured: set TRAJ_SEARXNG_URL, BRAVE_API_KEY/);
  assert.deepEqual(store.toolsetDrops(), { web: 20 });
  assert.equal(store.counters().dataset_rows, 20);
  // A resume reads and draws every row again: each prompt still counts once.
  await collect(
    batchEntries({
      dataset,
      reader: {},
      choice: { distribution: { name: 'web-heavy', toolsets: { web: 1, file: 0.5 } } },
      seed: 3,
      registry,
      store,
      availability: { env: {} },
    }),
  );
  assert.deepEqual(store.toolsetDrops(), { web: 20 });
});

test('keys and draws depend only on (seed, key): reordered rows keep their toolsets', async (t) => {
  const directory = temporaryDirectory(t);
  const rows = Array.from({ length: 30 }, (_, index) => JSON.stringify({ prompt: `row ${index}` }));
  const forward = join(directory, 'forward.jsonl');
  const backward = join(directory, 'backward.jsonl');
  writeFileSync(forward, `${rows.join('\n')}\n`);
  writeFileSync(backward, `${[...rows].reverse().join('\n')}\n`);
  const store = RunStore.open(join(directory, 'store.sqlite'));
  t.after(() => store.close());
  const draw = async (dataset: string, seed: number) =>
    Object.fromEntries(
      (
        await collect(
          batchEntries({
            dataset,
            reader: {},
            choice: { distribution: { name: 'balanced', toolsets: { terminal: 0.5, file: 0.5, todo: 0.3 } } },
            seed,
            registry: await loadToolRegistry(),
            store,
          }),
        )
      ).map((item) => [item.key, item.task.toolsets.join('+')]),
    );
  const first = await draw(forward, 11);
  assert.deepEqual(await draw(backward, 11), first);
  assert.notDeepEqual(await draw(forward, 12), first, 'another seed draws differently');
});
