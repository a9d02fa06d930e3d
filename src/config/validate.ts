import type { z } from 'zod';
import { ConfigError } from '../errors.js';
import { closestMatch } from '../util/closest-match.js';

/**
 * Turn zod issues into one message naming the file, the path inside it and what was expected.
 * `where` is the file (or "flag --x") the value came from. With the schema, an unknown key gets
 * its own line with the nearest known key (`endpoint.temprature: unknown key (did you mean
 * 'temperature'?)`) or the list of keys allowed there.
 */
export function describeIssues(where: string, error: z.ZodError, schema?: z.ZodType): string {
  return `invalid configuration:\n${issueLines(where, error, schema).join('\n')}`;
}

/** One line per issue (an unknown key gets its own, with the nearest known key). */
export function issueLines(where: string, error: z.ZodError, schema?: z.ZodType): string[] {
  return error.issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') {
      const known = schema ? knownKeysAt(schema, issue.path) : [];
      return issue.keys.map(
        (key) => `  ${where}: ${formatPath([...issue.path, key])}: ${unknownKeyMessage(key, known)}`,
      );
    }
    return [`  ${where}: ${formatPath(issue.path)}: ${issue.message}`];
  });
}

/**
 * The issues of several checks of one configuration (files, sections, flags), gathered so that a
 * user fixing it sees every mistake in one message instead of one per attempt.
 */
export class ConfigIssues {
  // A set: two loaders reading one file (MCP servers and the file's own check) report a mistake once.
  private readonly lines = new Set<string>();

  /** The parsed value, or undefined when it has issues (they are kept for `throwIfAny`). */
  check<S extends z.ZodType>(schema: S, value: unknown, where: string): z.infer<S> | undefined {
    const result = schema.safeParse(value);
    if (result.success) return result.data;
    for (const line of issueLines(where, result.error, schema)) this.lines.add(line);
    return undefined;
  }

  /** Run a check that throws (a room's own loader); its ConfigError joins the others. */
  attempt<T>(work: () => T): T | undefined {
    try {
      return work();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      // A validate() error carries its lines; any other ConfigError is one line of its own.
      const lines = error.details.lines;
      for (const line of Array.isArray(lines) ? (lines as string[]) : [error.message]) this.lines.add(indent(line));
      return undefined;
    }
  }

  throwIfAny(): void {
    if (this.lines.size === 0) return;
    throw new ConfigError(`invalid configuration:\n${[...this.lines].join('\n')}`, { code: 'config_invalid' });
  }
}

function indent(line: string): string {
  return line.startsWith('  ') ? line : `  ${line}`;
}

function formatPath(path: readonly PropertyKey[]): string {
  return path.length ? path.map(String).join('.') : '(top level)';
}

function unknownKeyMessage(key: string, known: string[]): string {
  if (known.length === 0) return 'unknown key';
  const near = closestMatch(key, known);
  return near ? `unknown key (did you mean '${near}'?)` : `unknown key (expected one of: ${known.join(', ')})`;
}

export function validate<S extends z.ZodType>(schema: S, value: unknown, where: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) {
    const lines = issueLines(where, result.error, schema);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`, {
      code: 'config_invalid',
      details: { where, lines },
    });
  }
  return result.data;
}

/**
 * The structural part of a zod schema's definition this walk reads. zod 4 exposes it as
 * `schema._zod.def`; its public types do not name the per-kind fields, hence this shape.
 */
interface Definition {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  valueType?: z.ZodType;
  element?: z.ZodType;
  options?: z.ZodType[];
  left?: z.ZodType;
  right?: z.ZodType;
  getter?: () => z.ZodType;
}

function definition(schema: z.ZodType): Definition {
  return (schema as unknown as { _zod: { def: Definition } })._zod.def;
}

/**
 * The schemas a wrapper stands for (optional, default, lazy, pipe, union, …), which a value of it
 * is a value of; none when the schema is no wrapper.
 */
function wrapped(def: Definition): z.ZodType[] {
  const present = (...schemas: (z.ZodType | undefined)[]) => schemas.filter((schema) => schema !== undefined);
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'catch':
    case 'readonly':
    case 'nonoptional':
      return present(def.innerType);
    case 'lazy':
      return def.getter ? [def.getter()] : [];
    case 'pipe':
      // z.preprocess(fn, schema) is a pipe into the schema; schema.transform(fn) a pipe out of it.
      return present(def.in, def.out);
    case 'union':
      return def.options ?? [];
    case 'intersection':
      return present(def.left, def.right);
    default:
      return [];
  }
}

/** The object schemas a value at this schema may be, with wrappers (optional, default, pipe, …) looked through. */
function objectsOf(schema: z.ZodType, depth = 0): Definition[] {
  if (depth > 20) return [];
  const def = definition(schema);
  if (def.type === 'object') return [def];
  return wrapped(def).flatMap((inner) => objectsOf(inner, depth + 1));
}

/** The schemas that describe the value one step down `key` from a value of this schema. */
function childrenOf(schema: z.ZodType, key: PropertyKey, depth = 0): z.ZodType[] {
  if (depth > 20) return [];
  const def = definition(schema);
  switch (def.type) {
    case 'object': {
      const child = typeof key === 'string' ? def.shape?.[key] : undefined;
      return child ? [child] : [];
    }
    case 'record':
      return def.valueType ? [def.valueType] : [];
    case 'array':
      return def.element ? [def.element] : [];
    default:
      return wrapped(def).flatMap((inner) => childrenOf(inner, key, depth + 1));
  }
}

/** The keys an object at `path` inside a value of `schema` may have (sorted; empty when unknown). */
export function knownKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let current: z.ZodType[] = [schema];
  for (const key of path) current = current.flatMap((candidate) => childrenOf(candidate, key));
  const shapes = current.flatMap((candidate) => objectsOf(candidate)).map((def) => def.shape ?? {});
  // A key whose only valid value is absence (z.never(), e.g. a misplaced `judge:`) is not one to suggest.
  const keys = new Set(
    shapes.flatMap((shape) =>
      Object.entries(shape)
        .filter(([, child]) => !isNever(child))
        .map(([key]) => key),
    ),
  );
  return [...keys].sort();
}

function isNever(schema: z.ZodType): boolean {
  const def = definition(schema);
  if (def.type === 'never') return true;
  return def.type === 'optional' && def.innerType !== undefined && isNever(def.innerType);
}
