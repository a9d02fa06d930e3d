import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as arrow from 'apache-arrow';
import * as parquet from 'parquet-wasm';
import { DatasetError } from '../../src/errors.js';
import { isBadRow, readDataset, type BadRow, type DatasetItem } from '../../src/dataset/index.js';

const directory = mkdtempSync(join(tmpdir(), 'traj-tabular-'));
after(() => rmSync(directory, { recursive: true, force: true }));

const { Field, Float64, Int64, List, Struct, Table, Utf8, vectorFromArray } = arrow;

/** Five rows mixing the three shapes, ids, nulls, nested metadata and one unusable row. */
function sampleTable(): arrow.Table {
  const messageType = new List(
    new Field('item', new Struct([new Field('role', new Utf8(), true), new Field('content', new Utf8(), true)]), true),
  );
  const turnType = new List(
    new Field('item', new Struct([new Field('from', new Utf8(), true), new Field('value', new Utf8(), true)]), true),
  );
  const metaType = new Struct([
    new Field('level', new Int64(), true),
    new Field('tags', new List(new Field('item', new Utf8(), true)), true),
  ]);
  return new Table({
    prompt: vectorFromArray(['first prompt', null, null, 'fourth prompt', null], new Utf8()),
    messages: vectorFromArray(
      [
        null,
        [
          { role: 'system', content: 'sys' },
          { role: 'user', content: 'second' },
        ],
        null,
        null,
        null,
      ],
      messageType,
    ),
    conversations: vectorFromArray([null, null, [{ from: 'human', value: 'third' }], null, null], turnType),
    id: vectorFromArray([11n, null, null, null, null], new Int64()),
    score: vectorFromArray([0.5, 1.5, null, 2, 3], new Float64()),
    meta: vectorFromArray([{ level: 3n, tags: ['x', 'y'] }, null, null, null, null], metaType),
  });
}

function expectRows(rows: Array<DatasetItem | BadRow>): void {
  assert.equal(rows.length, 5);
  const [first, second, third, fourth, fifth] = rows as [DatasetItem, DatasetItem, DatasetItem, DatasetItem, BadRow];
  assert.deepEqual(first, {
    index: 0,
    line: 1,
    id: '11',
    messages: [{ role: 'user', content: 'first prompt' }],
    fields: { score: 0.5, meta: { level: 3, tags: ['x', 'y'] } },
  });
  assert.deepEqual([second.system, second.messages], ['sys', [{ role: 'user', content: 'second' }]]);
  assert.deepEqual(second.fields, { score: 1.5, meta: null });
  assert.deepEqual(third.messages, [{ role: 'user', content: 'third' }]);
  assert.deepEqual([fourth.index, fourth.line, fourth.messages[0]!.content], [3, 4, 'fourth prompt']);
  assert.ok(isBadRow(fifth));
  assert.deepEqual([fifth.index, fifth.line], [4, 5]);
  assert.match(fifth.reason, /got keys score/);
}

async function collect(
  source: string,
  options: Parameters<typeof readDataset>[1] = {},
): Promise<Array<DatasetItem | BadRow>> {
  const out: Array<DatasetItem | BadRow> = [];
  for await (const row of readDataset(source, options)) out.push(row);
  return out;
}

describe('readDataset: Arrow IPC and Parquet', () => {
  let streamFile: string;
  let fileFormat: string;
  let parquetFile: string;

  before(() => {
    const table = sampleTable();
    streamFile = join(directory, 'rows.arrow');
    writeFileSync(streamFile, arrow.tableToIPC(table, 'stream'));
    fileFormat = join(directory, 'rows.feather');
    writeFileSync(fileFormat, arrow.tableToIPC(table, 'file'));
    // Two rows per row group: the reader must stitch three groups together in order.
    const properties = new parquet.WriterPropertiesBuilder().setMaxRowGroupSize(2).build();
    parquetFile = join(directory, 'rows.parquet');
    writeFileSync(
      parquetFile,
      parquet.writeParquet(parquet.Table.fromIPCStream(arrow.tableToIPC(table, 'stream')), properties),
    );
  });

  it('reads the Arrow IPC stream format with structs and lists as plain values', async () => {
    expectRows(await collect(streamFile, { skipBadRows: true }));
  });

  it('reads the Arrow IPC file format', async () => {
    expectRows(await collect(fileFormat, { skipBadRows: true }));
  });

  it('reads Parquet across row groups', async () => {
    expectRows(await collect(parquetFile, { skipBadRows: true }));
  });

  it('names the file and row of a bad row without skipBadRows', async () => {
    await assert.rejects(collect(parquetFile), (error: unknown) => {
      assert.ok(error instanceof DatasetError);
      assert.match(
        error.message,
        /rows\.parquet row 5: expected "prompt" \(string\) or "messages"\/"conversations" \(array\) — got keys score/,
      );
      return true;
    });
  });

  it('says when a file is not what its extension claims', async () => {
    const fake = join(directory, 'fake.parquet');
    writeFileSync(fake, '{"prompt": "not parquet"}\n');
    await assert.rejects(collect(fake), (error: unknown) => {
      assert.ok(error instanceof DatasetError);
      assert.match(error.message, /fake\.parquet: cannot read it as parquet/);
      return true;
    });
  });
});
