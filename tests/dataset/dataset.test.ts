import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { DatasetError } from '../../src/errors.js';
import { isBadRow, readDataset, type BadRow, type DatasetItem } from '../../src/dataset/index.js';
import { PromptKeyer } from '../../src/run/prompt-key.js';
import { projectRoot } from '../../src/util/paths.js';

const directory = mkdtempSync(join(tmpdir(), 'traj-dataset-'));
after(() => rmSync(directory, { recursive: true, force: true }));

function writeLines(name: string, lines: Array<string | object>): string {
  const file = join(directory, name);
  writeFileSync(file, `${lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n')}\n`);
  return file;
}

async function collect(
  source: string,
  options: Parameters<typeof readDataset>[1] = {},
): Promise<Array<DatasetItem | BadRow>> {
  const out: Array<DatasetItem | BadRow> = [];
  for await (const row of readDataset(source, options)) out.push(row);
  return out;
}

async function rejection(source: string): Promise<DatasetError> {
  try {
    await collect(source);
  } catch (error) {
    assert.ok(error instanceof DatasetError, `expected a DatasetError, got ${String(error)}`);
    return error;
  }
  assert.fail(`${source} was read without an error`);
}

describe('readDataset: JSONL rows of each shape', () => {
  it('normalises a prompt row and carries other fields through', async () => {
    const file = writeLines('prompt.jsonl', [
      {
        prompt: 'List the files',
        id: 7,
        system: 'Be brief.',
        image: 'traj-sandbox:bookworm',
        cwd: '/work',
        difficulty: 'easy',
        tags: ['a', 'b'],
      },
    ]);
    const [item] = await collect(file);
    assert.deepEqual(item, {
      index: 0,
      line: 1,
      id: '7',
      messages: [{ role: 'user', content: 'List the files' }],
      system: 'Be brief.',
      image: 'traj-sandbox:bookworm',
      cwd: '/work',
      fields: { difficulty: 'easy', tags: ['a', 'b'] },
    });
  });

  it('takes an OpenAI messages prefix: leading system apart, tool calls with object arguments as JSON text', async () => {
    const file = writeLines('messages.jsonl', [
      {
        messages: [
          { role: 'system', content: 'You are careful.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Count ' },
              { type: 'text', text: 'the lines' },
            ],
          },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'c1', type: 'function', function: { name: 'terminal', arguments: { command: 'wc -l x' } } },
            ],
          },
          { role: 'tool', tool_call_id: 'c1', content: '3 x' },
        ],
        source: 'unit',
      },
    ]);
    const [item] = (await collect(file)) as DatasetItem[];
    assert.equal(item!.system, 'You are careful.');
    assert.deepEqual(item!.messages, [
      { role: 'user', content: 'Count the lines' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'terminal', arguments: '{"command":"wc -l x"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: '3 x' },
    ]);
    assert.deepEqual(item!.fields, { source: 'unit' });
  });

  it('turns a Hermes ShareGPT prefix back into messages: think → reasoning, tool_call ↔ tool_response by name', async () => {
    const gpt =
      '<think>\nlook first\n</think>\nLet me check.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n</tool_call>\n<tool_call>\n{"name": "terminal", "arguments": {"command": "ls"}}\n</tool_call>';
    const tool =
      '<tool_response>\n{"tool_call_id": "x", "name": "terminal", "content": "a.txt"}\n</tool_response>\n<tool_response>\n{"name": "read_file", "content": {"text": "hi"}}\n</tool_response>';
    const file = writeLines('sharegpt.jsonl', [
      {
        conversations: [
          { from: 'system', value: 'sys' },
          { from: 'human', value: 'What is in a.txt?' },
          { from: 'gpt', value: gpt },
          { from: 'tool', value: tool },
        ],
      },
    ]);
    const [item] = (await collect(file)) as DatasetItem[];
    assert.equal(item!.system, 'sys');
    assert.deepEqual(item!.messages, [
      { role: 'user', content: 'What is in a.txt?' },
      {
        role: 'assistant',
        content: 'Let me check.',
        reasoning: 'look first',
        tool_calls: [
          { id: 'call_2_0', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.txt"}' } },
          { id: 'call_2_1', type: 'function', function: { name: 'terminal', arguments: '{"command":"ls"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_2_1', name: 'terminal', content: 'a.txt' },
      { role: 'tool', tool_call_id: 'call_2_0', name: 'read_file', content: '{"text":"hi"}' },
    ]);
  });

  it('treats null known columns as absent and keeps other nulls as pass-through', async () => {
    const file = writeLines('nulls.jsonl', [{ prompt: 'hi', messages: null, id: null, note: null }]);
    const [item] = (await collect(file)) as DatasetItem[];
    assert.equal(item!.id, undefined);
    assert.deepEqual(item!.fields, { note: null });
  });
});

describe('readDataset: JSONL errors and skipping', () => {
  it('names the file and line of a malformed JSON line, counting blank lines', async () => {
    const file = writeLines('broken.jsonl', [{ prompt: 'one' }, '', '{"prompt": "two"', { prompt: 'three' }]);
    const error = await rejection(file);
    assert.match(error.message, /broken\.jsonl:3: invalid JSON/);
    assert.equal(error.code, 'dataset_row_invalid');
  });

  it('says what a row lacks, listing the keys it has', async () => {
    const file = writeLines('gsm.jsonl', [{ question: 'q', answer: 'a' }]);
    const error = await rejection(file);
    assert.equal(
      error.message,
      `${file}:1: expected "prompt" (string) or "messages"/"conversations" (array) — got keys question, answer`,
    );
  });

  it('names the field path of a wrong type', async () => {
    const file = writeLines('types.jsonl', [{ prompt: 'ok' }, { messages: [{ role: 'robot', content: 'x' }] }]);
    const error = await rejection(file);
    assert.match(error.message, /types\.jsonl:2: messages\.0\.role: /);
  });

  it('refuses a prefix the model cannot continue', async () => {
    const cases: Array<[object, RegExp]> = [
      [
        {
          messages: [
            { role: 'user', content: 'a' },
            { role: 'assistant', content: 'b' },
          ],
        },
        /must end with a user message or tool results/,
      ],
      [
        {
          messages: [
            { role: 'user', content: 'a' },
            { role: 'assistant', content: null, tool_calls: [{ id: 'c9', function: { name: 't' } }] },
          ],
        },
        /tool call "c9" has no tool result/,
      ],
      [
        {
          messages: [
            { role: 'user', content: 'a' },
            { role: 'tool', tool_call_id: 'zz', content: 'r' },
          ],
        },
        /unknown tool_call_id "zz"/,
      ],
      [
        {
          messages: [
            { role: 'user', content: 'a' },
            { role: 'system', content: 's' },
          ],
        },
        /messages\.1: a system message is only allowed at the start/,
      ],
      [{ prompt: 'a', messages: [{ role: 'user', content: 'a' }] }, /one of "prompt", "messages" or "conversations"/],
      [
        {
          conversations: [
            { from: 'human', value: 'a' },
            { from: 'gpt', value: '<tool_call>{oops</tool_call>' },
          ],
        },
        /conversations\.1: tool call block 1 is not valid JSON/,
      ],
      [
        {
          system: 's',
          messages: [
            { role: 'system', content: 't' },
            { role: 'user', content: 'u' },
          ],
        },
        /both a "system" field and a system message/,
      ],
      [[1, 2], /expected a JSON object, got an array/],
    ];
    for (const [index, [row, pattern]] of cases.entries()) {
      const file = writeLines(`prefix-${index}.jsonl`, [row]);
      assert.match((await rejection(file)).message, pattern);
    }
  });

  it('yields markers for bad rows with skipBadRows and keeps going', async () => {
    const file = writeLines('skip.jsonl', [{ prompt: 'one' }, 'not json', '', { nope: 1 }, { prompt: 'two' }]);
    const rows = await collect(file, { skipBadRows: true });
    assert.equal(rows.length, 4);
    assert.deepEqual(
      rows.filter(isBadRow).map(({ index, line }) => ({ index, line })),
      [
        { index: 1, line: 2 },
        { index: 2, line: 4 },
      ],
    );
    assert.match((rows[1] as BadRow).reason, /^invalid JSON/);
    const good = rows.filter((row): row is DatasetItem => !isBadRow(row));
    assert.deepEqual(
      good.map((row) => [row.index, row.line, row.messages[0]!.content]),
      [
        [0, 1, 'one'],
        [3, 5, 'two'],
      ],
    );
  });

  it('skips blank lines, a byte-order mark and CRLF endings', async () => {
    const file = join(directory, 'crlf.jsonl');
    writeFileSync(file, '\uFEFF{"prompt":"a"}\r\n\r\n   \r\n{"prompt":"b"}\r\n');
    const rows = (await collect(file)) as DatasetItem[];
    assert.deepEqual(
      rows.map((row) => [row.line, row.messages[0]!.content]),
      [
        [1, 'a'],
        [4, 'b'],
      ],
    );
  });

  it('reads gzipped JSONL', async () => {
    const file = join(directory, 'zipped.jsonl.gz');
    writeFileSync(file, gzipSync('{"prompt":"z1"}\n{"prompt":"z2"}\n'));
    const rows = (await collect(file)) as DatasetItem[];
    assert.deepEqual(
      rows.map((row) => row.messages[0]!.content),
      ['z1', 'z2'],
    );
  });

  it('refuses an unknown extension listing the supported ones, and names a missing file', async () => {
    const csv = join(directory, 'data.csv');
    writeFileSync(csv, 'prompt\nhi\n');
    const unknown = await rejection(csv);
    assert.match(unknown.message, /data\.csv: unknown dataset format; supported: \.jsonl, .*\.parquet, \.arrow/);
    const missing = await rejection(join(directory, 'absent.jsonl'));
    assert.match(missing.message, /absent\.jsonl: dataset file not found \(ENOENT\)/);
    assert.equal(missing.code, 'dataset_missing');
  });

  it('stops when the signal aborts and when the consumer breaks early', async () => {
    const file = writeLines(
      'many.jsonl',
      Array.from({ length: 50 }, (_, index) => ({ prompt: `p${index}` })),
    );
    const controller = new AbortController();
    let seen = 0;
    for await (const _row of readDataset(file, { signal: controller.signal })) {
      seen += 1;
      if (seen === 3) controller.abort();
    }
    assert.equal(seen, 3);
    let first: DatasetItem | BadRow | undefined;
    for await (const row of readDataset(file)) {
      first = row;
      break;
    }
    assert.equal((first as DatasetItem).line, 1);
  });
});

describe('the shipped sample dataset', () => {
  it('reads cleanly, with one explicit id carrying metadata and one duplicate prompt keyed #0 and #1', async () => {
    const source = join(projectRoot(), 'datasets', 'sample', 'prompts.jsonl');
    const rows = (await collect(source)) as DatasetItem[];
    assert.equal(rows.length, 12);
    const keyer = new PromptKeyer({ source });
    const keys = rows.map((row) => keyer.key(row));
    assert.equal(new Set(keys).size, 12);
    const withId = rows.filter((row) => row.id !== undefined);
    assert.deepEqual(
      withId.map((row) => [row.id, row.fields]),
      [['sample-json-roundtrip', { category: 'file', difficulty: 'easy' }]],
    );
    const repeated = keys.filter((key) => key.endsWith('#1'));
    assert.equal(repeated.length, 1);
    assert.ok(keys.includes(repeated[0]!.replace('#1', '#0')));
  });
});
