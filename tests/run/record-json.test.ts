import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { RecordJson } from '../../src/run/record-json.js';
import { RunStore, type RecordColumns } from '../../src/run/store.js';
import { temporaryDirectory } from '../helpers/cli.js';

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'write_file',
      description: 'Write a file — creates folders, overwrites "quoted" text, keeps \\ and \u0001',
      parameters: { type: 'object', properties: { path: { type: 'string' } } },
    },
  },
];
const SYSTEM = 'You are a function calling AI model — <tools>[…]</tools> "quotes" \n\u2028 \u0001';

function record(id: string, overrides: Record<string, unknown> = {}) {
  return {
    id,
    sample: 0,
    conversations: [
      { from: 'system', value: SYSTEM },
      { from: 'human', value: `prompt ${id}` },
    ],
    messages: [{ role: 'user', content: `prompt ${id}` }],
    tools: TOOLS,
    toolsets: ['file'],
    completed: true,
    ...overrides,
  };
}

test('a record encodes to the bytes of JSON.stringify, its shared parts taken from the cache', () => {
  const encoder = new RecordJson();
  for (const id of ['a', 'b', 'ü—😀']) {
    const value = record(id);
    assert.equal(encoder.encode(value).toString('utf8'), JSON.stringify(value));
  }
});

test('text that looks like the stand-ins, anywhere in a record, is encoded as written', () => {
  const encoder = new RecordJson();
  // What a model could write: control characters, UUIDs, quotes, the JSON of a stand-in's shape.
  const lookalikes = [
    '\u0001',
    '"\\u0001"',
    `\u0001${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}`,
    '\u0001tools',
    JSON.stringify(SYSTEM),
    JSON.stringify(TOOLS),
  ];
  for (const text of lookalikes) {
    const value = record('x', {
      messages: [{ role: 'assistant', content: text }],
      conversations: [
        { from: 'system', value: SYSTEM },
        { from: 'gpt', value: text },
      ],
      toolsets: [text],
    });
    assert.equal(encoder.encode(value).toString('utf8'), JSON.stringify(value));
  }
});

test('records whose parts are not the usual shape, or not shared, are encoded in full', () => {
  const encoder = new RecordJson();
  const shapes = [
    record('no-tools', { tools: undefined }),
    record('tools-object', { tools: { a: 1 } }),
    record('no-conversations', { conversations: undefined }),
    record('empty', { conversations: [] }),
    record('human-first', { conversations: [{ from: 'human', value: 'hi' }] }),
    record('extra-key', { conversations: [{ from: 'system', value: SYSTEM, weight: 1 }] }),
    record('keys-reordered', { conversations: [{ value: SYSTEM, from: 'system' }] }),
    record('value-not-text', { conversations: [{ from: 'system', value: 7 }] }),
    record('other-tools', { tools: [{ type: 'function', function: { name: 'other' } }] }),
    record('other-system', { conversations: [{ from: 'system', value: 'another prompt' }] }),
    { tools: TOOLS, conversations: [{ from: 'system', value: SYSTEM }], id: 'tools-first' },
  ];
  for (const value of shapes) {
    assert.equal(encoder.encode(value).toString('utf8'), JSON.stringify(value), JSON.stringify(value).slice(0, 60));
  }
});

test('the store keeps the record text a plain JSON.stringify would, readable by SQL', (t) => {
  const store = RunStore.open(join(temporaryDirectory(t), 'run.sqlite'));
  t.after(() => store.close());
  const columns = {
    has_reasoning: false,
    reward_error: null,
    usage: { prompt_tokens: 1, completion_tokens: 1, reasoning_tokens: 0 },
    tool_stats: [],
  };
  const value = { ...record('k'), ...columns } as unknown as RecordColumns;
  store.markDispatched('k', 0, 0, ['file']);
  store.saveResult({ key: 'k', sample: 0, status: 'done', record: value });
  store.flush();
  const stored = store.getItem('k', 0)!.record;
  assert.equal(typeof stored, 'string', 'stored as TEXT, not as a blob');
  assert.equal(stored, JSON.stringify(value));
  assert.deepEqual(
    [...store.recordBytes('done')].map((bytes) => Buffer.from(bytes).toString('utf8')),
    [stored],
  );
});

test('the shared parts are encoded once per tools array and system text, so a pool must not change them', () => {
  const encoder = new RecordJson();
  const tools = structuredClone(TOOLS);
  const first = record('a', { tools });
  assert.equal(encoder.encode(first).toString('utf8'), JSON.stringify(first));
  tools.push(structuredClone(TOOLS[0]!));
  const reread = JSON.parse(encoder.encode(record('b', { tools })).toString('utf8')) as { tools: unknown[] };
  assert.equal(reread.tools.length, 1, 'the array was encoded when first seen');
});
