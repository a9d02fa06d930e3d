import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type * as Arrow from 'apache-arrow';
import { parse as parseYaml } from 'yaml';
import { datasetFeatures } from '../../src/export/card-features.js';
import { exportRun, trajectorySchema } from '../../src/export/index.js';
import { temporaryDirectory } from '../helpers/cli.js';
import { buildStore, MIXED_ROLLOUTS } from './store-fixture.js';

/** The test's own reading of the Hugging Face Features YAML: a type tree to compare with Arrow's. */
type FeatureTree = string | { list: FeatureTree } | { struct: Array<[string, FeatureTree]> };

function yamlTree(feature: Record<string, unknown>): FeatureTree {
  const keys = Object.keys(feature).filter((key) => key !== 'name');
  assert.equal(keys.length, 1, `one type key per feature: ${JSON.stringify(feature)}`);
  const [kind] = keys as [string];
  const value = feature[kind];
  if (kind === 'dtype') return value as string;
  if (kind === 'struct') return { struct: fieldsOf(value as Record<string, unknown>[]) };
  assert.equal(kind, 'list', `unknown feature kind ${kind}`);
  // `list: string` is a list of a dtype, `list: [...]` a list of structs, `list: {...}` a list of another type.
  if (typeof value === 'string') return { list: value };
  if (Array.isArray(value)) return { list: { struct: fieldsOf(value as Record<string, unknown>[]) } };
  return { list: yamlTree(value as Record<string, unknown>) };
}

function fieldsOf(features: Record<string, unknown>[]): Array<[string, FeatureTree]> {
  return features.map((feature) => [feature.name as string, yamlTree(feature)]);
}

/** The same tree from an Arrow type, with the dtype names `datasets` gives these Arrow types. */
function arrowTree(type: Arrow.DataType): FeatureTree {
  const scalars: Record<string, string> = {
    Utf8: 'string',
    Bool: 'bool',
    Int32: 'int32',
    Int64: 'int64',
    Float64: 'float64',
  };
  const name = String(type);
  if (name in scalars) return scalars[name]!;
  if (name.startsWith('List<')) return { list: arrowTree(type.children[0]!.type) };
  assert.ok(name.startsWith('Struct<'), `a type the card cannot declare: ${name}`);
  return { struct: type.children.map((child: Arrow.Field) => [child.name, arrowTree(child.type)]) };
}

function cardFeatures(directory: string): Record<string, unknown>[] {
  const text = readFileSync(join(directory, 'README.md'), 'utf8');
  const header = parseYaml(/^---\n([\s\S]*?)\n---\n/.exec(text)![1]!) as {
    dataset_info?: { features?: Record<string, unknown>[] };
  };
  assert.ok(header.dataset_info?.features, 'the card declares dataset_info.features');
  return header.dataset_info.features;
}

test('the card declares dataset_info.features equal to the Arrow schema the shards are written with, field by field', async (t) => {
  const directory = temporaryDirectory(t);
  const storePath = buildStore(directory, 'features', MIXED_ROLLOUTS);
  const arrow = await import('apache-arrow');
  for (const view of ['both', 'sharegpt', 'messages'] as const) {
    // The schema of the file actually written (Arrow IPC), not the one traj says it writes.
    const arrowOut = join(directory, `${view}-arrow`);
    await exportRun({ storePath, out: arrowOut, format: 'arrow', view });
    const written = arrow.tableFromIPC(readFileSync(join(arrowOut, 'data', 'train-00000-of-00001.arrow'))).schema;
    const expected = written.fields.map((field) => [field.name, arrowTree(field.type)]);
    for (const format of ['arrow', 'parquet', 'jsonl'] as const) {
      const out = join(directory, `${view}-${format}`);
      if (format !== 'arrow') await exportRun({ storePath, out, format, view });
      const declared = cardFeatures(out);
      assert.deepEqual(
        declared.map((feature) => feature.name),
        written.fields.map((field) => field.name),
        `${view}/${format}: the columns, in order`,
      );
      assert.deepEqual(fieldsOf(declared), expected, `${view}/${format}: every field's type`);
    }
  }
  // Spot checks of the YAML form itself, as `datasets` writes it.
  const both = cardFeatures(join(directory, 'both-jsonl'));
  assert.deepEqual(
    both.find((feature) => feature.name === 'conversations'),
    {
      name: 'conversations',
      list: [
        { name: 'from', dtype: 'string' },
        { name: 'value', dtype: 'string' },
      ],
    },
  );
  assert.deepEqual(
    both.find((feature) => feature.name === 'toolsets'),
    { name: 'toolsets', list: 'string' },
  );
  assert.deepEqual(
    both.find((feature) => feature.name === 'reward'),
    { name: 'reward', dtype: 'float64' },
  );
  assert.deepEqual(
    both.find((feature) => feature.name === 'tools'),
    { name: 'tools', dtype: 'string' },
  );
});

test('the features follow the schema they are given, and a type without a dtype is refused, not guessed', async () => {
  const arrow = await import('apache-arrow');
  const { Field, Schema, Struct, List, Utf8, Int64, DateMillisecond } = arrow;
  const schema = new Schema([
    new Field('nested', new List(new Field('item', new List(new Field('item', new Utf8())))), true),
    new Field('point', new Struct([new Field('x', new Int64())])),
  ]);
  assert.deepEqual(datasetFeatures(arrow, schema), [
    { name: 'nested', list: { list: 'string' } },
    { name: 'point', struct: [{ name: 'x', dtype: 'int64' }] },
  ]);
  assert.throws(
    () => datasetFeatures(arrow, new Schema([new Field('when', new DateMillisecond())])),
    /no Hugging Face dtype for the Arrow type Date.*card-features\.ts/,
  );
  // Every column of traj's own schema has a mapping (a new column type cannot ship without one).
  for (const view of ['both', 'sharegpt', 'messages'] as const)
    assert.equal(
      datasetFeatures(arrow, trajectorySchema(arrow, view)).length,
      trajectorySchema(arrow, view).fields.length,
    );
});

test('atropos and hermes cards declare no traj features: their lines follow other layouts', async (t) => {
  const directory = temporaryDirectory(t);
  const storePath = buildStore(directory, 'other', [{ key: 'one', reward: 1, group: 'g' }]);
  for (const format of ['atropos', 'hermes'] as const) {
    const out = join(directory, format);
    await exportRun({ storePath, out, format });
    const text = readFileSync(join(out, 'README.md'), 'utf8');
    assert.doesNotMatch(text, /dataset_info:/, format);
  }
});
