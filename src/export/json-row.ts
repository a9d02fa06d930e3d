import type * as Arrow from 'apache-arrow';
import type { ArrowModule } from './arrow-schema.js';

/**
 * A row of the export schema as plain JSON: exactly the schema's columns, in its order, every
 * struct with exactly its fields (null where the row has none), 64-bit integers as JSON numbers.
 * So a JSON line has the shape and value types of the Parquet row written from the same record,
 * whatever the record holds: a reader types both the same way. A value of the wrong kind throws,
 * naming its path, as the Parquet writer refuses it.
 */
export function jsonRow(
  arrow: ArrowModule,
  schema: Arrow.Schema,
  row: Record<string, unknown>,
): Record<string, unknown> {
  return structValue(arrow, schema.fields, row, '');
}

function structValue(
  arrow: ArrowModule,
  fields: Arrow.Field[],
  value: Record<string, unknown>,
  path: string,
): Record<string, unknown> {
  return Object.fromEntries(
    fields.map((field) => {
      const at = path ? `${path}.${field.name}` : field.name;
      return [field.name, jsonValue(arrow, field.type, value[field.name], at)];
    }),
  );
}

function jsonValue(arrow: ArrowModule, type: Arrow.DataType, value: unknown, path: string): unknown {
  if (value === null || value === undefined) return null;
  const { DataType } = arrow;
  if (DataType.isStruct(type) && typeof value === 'object' && !Array.isArray(value))
    return structValue(arrow, type.children, value as Record<string, unknown>, path);
  if (DataType.isList(type) && Array.isArray(value)) {
    const item = type.children[0]!.type;
    return value.map((element, index) => jsonValue(arrow, item, element, `${path}.${index}`));
  }
  if (DataType.isUtf8(type) && typeof value === 'string') return value;
  if (DataType.isBool(type) && typeof value === 'boolean') return value;
  // Token counts and row indexes are far below 2^53: a JSON number holds them exactly.
  if ((DataType.isInt(type) || DataType.isFloat(type)) && (typeof value === 'number' || typeof value === 'bigint'))
    return Number(value);
  const shown = typeof value === 'object' ? JSON.stringify(value) : String(value);
  throw new TypeError(`${path}: expected ${String(type)}, got ${shown.slice(0, 80)}`);
}
