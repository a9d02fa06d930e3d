import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DatasetError } from '../../src/errors.js';
import type { DatasetItem } from '../../src/dataset/index.js';
import { PromptKeyer } from '../../src/run/prompt-key.js';

function row(content: string, extra: Partial<DatasetItem> = {}): DatasetItem {
  return { index: 0, line: 0, messages: [{ role: 'user', content }], fields: {}, ...extra };
}

/** Key a whole dataset in file order, as the run pipeline does, and map row label → key. */
function keysOf(rows: Array<{ label: string; item: DatasetItem }>): Map<string, string> {
  const keyer = new PromptKeyer({ source: 'rows.jsonl' });
  const keys = new Map<string, string>();
  rows.forEach(({ label, item }, index) => keys.set(label, keyer.key({ ...item, line: index + 1 })));
  return keys;
}

describe('PromptKeyer', () => {
  it('gives duplicates #0, #1… in order of appearance and distinct prompts #0', () => {
    const keys = keysOf([
      { label: 'a1', item: row('alpha') },
      { label: 'b', item: row('beta') },
      { label: 'a2', item: row('alpha') },
      { label: 'a3', item: row('alpha') },
    ]);
    const [hashA, occurrenceA1] = keys.get('a1')!.split('#');
    assert.match(hashA!, /^[0-9a-f]{64}$/);
    assert.deepEqual([occurrenceA1, keys.get('a2'), keys.get('a3')], ['0', `${hashA}#1`, `${hashA}#2`]);
    assert.match(keys.get('b')!, /^[0-9a-f]{64}#0$/);
    assert.notEqual(keys.get('b')!.split('#')[0], hashA);
  });

  it('never changes the key of another distinct prompt when rows are inserted, deleted or reordered', () => {
    const original = [
      { label: 'p1', item: row('one') },
      { label: 'p2', item: row('two') },
      { label: 'd1', item: row('dup') },
      { label: 'p3', item: row('three') },
      { label: 'd2', item: row('dup') },
    ];
    const before = keysOf(original);
    const edited = [
      { label: 'new', item: row('inserted') },
      { label: 'p3', item: row('three') },
      { label: 'd1', item: row('dup') },
      { label: 'p1', item: row('one') },
      { label: 'd2', item: row('dup') },
    ];
    const after = keysOf(edited);
    for (const label of ['p1', 'p3', 'd1', 'd2']) assert.equal(after.get(label), before.get(label), label);
    assert.ok(![...before.values()].includes(after.get('new')!));
  });

  it('keys by the canonical prompt: system, image and cwd count, pass-through fields and key order do not', () => {
    const keyer = new PromptKeyer();
    const base = keyer.key(row('same', { fields: { a: 1 } }));
    const keys = [
      keyer.key(row('same', { system: 'persona' })),
      keyer.key(row('same', { image: 'img:1' })),
      keyer.key(row('same', { cwd: '/srv' })),
    ];
    for (const key of keys) assert.ok(key.endsWith('#0'), key);
    assert.equal(new Set([base, ...keys].map((key) => key.split('#')[0])).size, 4);
    const reordered = { messages: [{ content: 'same', role: 'user' as const }], fields: { b: 2 }, index: 9, line: 9 };
    assert.equal(keyer.key(reordered), base.replace('#0', '#1'));
  });

  it('uses an explicit id as the key and refuses a duplicate id naming both lines', () => {
    const keyer = new PromptKeyer({ source: 'rows.jsonl' });
    assert.equal(keyer.key(row('x', { id: 'task-1', line: 3 })), 'task-1');
    assert.equal(keyer.key(row('x', { id: 'task-2', line: 4 })), 'task-2');
    assert.throws(
      () => keyer.key(row('y', { id: 'task-1', line: 17 })),
      (error: unknown) => {
        assert.ok(error instanceof DatasetError);
        assert.equal(
          error.message,
          'rows.jsonl: duplicate id "task-1" at lines 3 and 17; ids must be unique (or drop the id field to key rows by their content)',
        );
        return true;
      },
    );
    const tabular = new PromptKeyer({ source: 'rows.parquet' });
    tabular.key(row('x', { id: '5', line: 1 }));
    assert.throws(() => tabular.key(row('x', { id: '5', line: 2 })), /rows\.parquet: duplicate id "5" at rows 1 and 2/);
  });

  it('does not let id rows take part in occurrence counting', () => {
    const keyer = new PromptKeyer();
    keyer.key(row('shared', { id: 'explicit' }));
    assert.match(keyer.key(row('shared')), /#0$/);
  });
});
