import type * as Arrow from 'apache-arrow';
import type { ArrowModule } from './arrow-schema.js';

/**
 * A type in the Hugging Face `datasets` Features YAML (`dataset_info.features` of a card):
 * `dtype: string`, `list: <type>` or `struct: [<feature>, ...]`. A list of structs is written
 * `list: [<feature>, ...]` and a list of scalars `list: string`, as `Features._to_yaml_list` writes
 * them; `datasets` 2.x and 4.x both read these forms.
 */
export type FeatureType =
  | { dtype: string }
  | { list: string | CardFeature[] | FeatureType }
  | { struct: CardFeature[] };

/** A named column or struct field in the Features YAML. */
export type CardFeature = { name: string } & FeatureType;

/**
 * The card's `dataset_info.features`, derived from the Arrow schema the Parquet/Arrow shards are
 * written with and the JSONL rows are shaped by, so the three cannot drift: a loader that reads the
 * card types JSON lines exactly as it types Parquet. An Arrow type without a `datasets` dtype here
 * is a programming error (a new column type needs its mapping), not something to guess.
 */
export function datasetFeatures(arrow: ArrowModule, schema: Arrow.Schema): CardFeature[] {
  return schema.fields.map((field) => featureOf(arrow, field));
}

function featureOf(arrow: ArrowModule, field: Arrow.Field): CardFeature {
  return { name: field.name, ...featureType(arrow, field.type) };
}

function featureType(arrow: ArrowModule, type: Arrow.DataType): FeatureType {
  if (arrow.DataType.isStruct(type)) return { struct: type.children.map((child) => featureOf(arrow, child)) };
  if (arrow.DataType.isList(type)) {
    const item = featureType(arrow, type.children[0]!.type);
    // The YAML shortens `list: {dtype: x}` to `list: x` and `list: {struct: [...]}` to `list: [...]`.
    if ('dtype' in item) return { list: item.dtype };
    if ('struct' in item) return { list: item.struct };
    return { list: item };
  }
  return { dtype: scalarDtype(arrow, type) };
}

function scalarDtype(arrow: ArrowModule, type: Arrow.DataType): string {
  if (arrow.DataType.isUtf8(type)) return 'string';
  if (arrow.DataType.isBool(type)) return 'bool';
  if (arrow.DataType.isInt(type) && type.isSigned && [8, 32, 64].includes(type.bitWidth)) return `int${type.bitWidth}`;
  if (arrow.DataType.isFloat(type) && type.precision === arrow.Precision.DOUBLE) return 'float64';
  throw new Error(`no Hugging Face dtype for the Arrow type ${String(type)}: add its mapping in card-features.ts`);
}
