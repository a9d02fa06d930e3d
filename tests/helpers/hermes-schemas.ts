import type { ToolSpec } from '../../src/model/messages.js';

/** tests/fixtures/hermes/tool-schemas.json, as scripts/extract-hermes-schemas.py writes it. */
export interface HermesGolden {
  commit: string;
  /** Per tool, the dotted paths of descriptions Hermes computes when it runs (written as null). */
  dynamic: Record<string, string[]>;
  tools: Record<string, { source: string; schema: Record<string, unknown> }>;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** `"required": []` and no `required` say the same; zod writes the second. */
function normalized(value: Json): Json {
  if (Array.isArray(value)) return value.map(normalized);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value).filter(
    ([key, item]) => !(key === 'required' && Array.isArray(item) && item.length === 0),
  );
  return Object.fromEntries(entries.map(([key, item]) => [key, normalized(item)]));
}

function withoutPath(value: Json, path: readonly string[]): Json {
  if (path.length === 0 || value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const [head, ...rest] = path as [string, ...string[]];
  if (!(head in value)) return value;
  if (rest.length === 0) {
    const { [head]: _dropped, ...kept } = value;
    return kept;
  }
  return { ...value, [head]: withoutPath(value[head]!, rest) };
}

function describe(value: Json | undefined): string {
  const text = JSON.stringify(value);
  return text === undefined ? 'absent' : text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

function compare(traj: Json | undefined, hermes: Json | undefined, path: string, out: string[]): void {
  const bothObjects =
    traj !== null &&
    hermes !== null &&
    typeof traj === 'object' &&
    typeof hermes === 'object' &&
    !Array.isArray(traj) &&
    !Array.isArray(hermes);
  if (bothObjects) {
    for (const key of new Set([...Object.keys(hermes), ...Object.keys(traj)]))
      compare(traj[key], hermes[key], path ? `${path}.${key}` : key, out);
    return;
  }
  if (JSON.stringify(traj) !== JSON.stringify(hermes))
    out.push(`${path}: traj ${describe(traj)}, Hermes ${describe(hermes)}`);
}

/**
 * Where traj's function spec differs from Hermes' schema: one line per path. Key order does not
 * matter; array order (enums, required lists) does, as the model reads it. Each dynamic path must be
 * a string on traj's side and is otherwise not compared.
 */
export function hermesSchemaDifferences(
  traj: ToolSpec['function'],
  hermes: Record<string, unknown>,
  dynamic: readonly string[],
): string[] {
  let ours = normalized(traj as unknown as Json);
  let theirs = normalized(hermes as Json);
  const out: string[] = [];
  for (const path of dynamic) {
    const parts = path.split('.');
    const value = parts.reduce<Json | undefined>(
      (at, part) => (at !== null && typeof at === 'object' && !Array.isArray(at) ? at[part] : undefined),
      ours,
    );
    if (typeof value !== 'string') out.push(`${path}: traj ${describe(value)}, Hermes a string built at run time`);
    ours = withoutPath(ours, parts);
    theirs = withoutPath(theirs, parts);
  }
  compare(ours, theirs, '', out);
  return out;
}
