import { canonicalJson } from '../util/hash.js';
import { TrajectoryRecordSchema } from '../trajectory/record.js';
import { parseFilter, type FilterExpression, type FilterValue } from './filter-syntax.js';

/** Decides whether a record goes into the export. */
export type RecordPredicate = (record: unknown) => boolean;

/** The fields a filter may start a path with: the trajectory record's top-level fields. */
export const FILTER_FIELDS: ReadonlySet<string> = new Set(Object.keys(TrajectoryRecordSchema.shape));

/**
 * Compile `--filter EXPR` into a predicate. Semantics: a missing field is null; `==`/`!=` compare
 * JSON values (null equals missing); `<`, `<=`, `>`, `>=` compare two numbers or two strings and
 * are false otherwise (so `reward >= 0.5` drops unscored rows); `contains` tests list membership
 * or a substring; `in` is `contains` reversed; a path through a list collects the field of every
 * element (`tool_stats.name contains "terminal"`); a bare value is true unless it is null, false,
 * 0, "" or an empty list.
 */
export function compileFilter(source: string): RecordPredicate {
  const expression = parseFilter(source, FILTER_FIELDS);
  return (record) => evaluate(expression, record);
}

function evaluate(expression: FilterExpression, record: unknown): boolean {
  switch (expression.kind) {
    case 'or':
      return evaluate(expression.left, record) || evaluate(expression.right, record);
    case 'and':
      return evaluate(expression.left, record) && evaluate(expression.right, record);
    case 'not':
      return !evaluate(expression.operand, record);
    case 'test':
      return truthy(resolve(expression.value, record));
    case 'compare':
      return compare(expression.operator, resolve(expression.left, record), resolve(expression.right, record));
  }
}

function resolve(value: FilterValue, record: unknown): unknown {
  switch (value.kind) {
    case 'literal':
      return value.value;
    case 'list':
      return value.items.map((item) => resolve(item, record));
    case 'length': {
      const of = resolve(value.of, record);
      if (typeof of === 'string' || Array.isArray(of)) return of.length;
      if (of && typeof of === 'object') return Object.keys(of).length;
      return null;
    }
    case 'field':
      return value.path.reduce<unknown>(step, record) ?? null;
  }
}

/** One path step; a name applied to a list collects it from every element. */
function step(current: unknown, segment: string | number): unknown {
  if (current === null || current === undefined) return undefined;
  if (Array.isArray(current)) {
    if (typeof segment === 'number') return current[segment];
    return current.flatMap((item) => step(item, segment) ?? []);
  }
  // Own properties only: a path never reaches the prototype (`constructor`, `__proto__`).
  if (typeof current === 'object' && Object.hasOwn(current, segment))
    return (current as Record<string, unknown>)[segment];
  return undefined;
}

function compare(operator: string, left: unknown, right: unknown): boolean {
  switch (operator) {
    case '==':
      return equal(left, right);
    case '!=':
      return !equal(left, right);
    case 'contains':
      return contains(left, right);
    case 'in':
      return contains(right, left);
    default:
      return ordered(operator, left, right);
  }
}

function equal(left: unknown, right: unknown): boolean {
  return canonicalJson(left ?? null) === canonicalJson(right ?? null);
}

function contains(container: unknown, item: unknown): boolean {
  if (Array.isArray(container)) return container.some((element) => equal(element, item));
  if (typeof container === 'string' && typeof item === 'string') return container.includes(item);
  return false;
}

function ordered(operator: string, left: unknown, right: unknown): boolean {
  const comparable =
    (typeof left === 'number' && typeof right === 'number') || (typeof left === 'string' && typeof right === 'string');
  if (!comparable) return false;
  const a = left as number | string;
  const b = right as number | string;
  if (operator === '<') return a < b;
  if (operator === '<=') return a <= b;
  if (operator === '>') return a > b;
  return a >= b;
}

function truthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  return Boolean(value);
}
