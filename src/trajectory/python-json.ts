import { PythonNumber } from './python-json-value.js';

/**
 * JSON text as Python's `json.dumps(value, ensure_ascii=False)` writes it (", " and ": "
 * separators). Hermes-format datasets are produced and consumed by Python tooling; matching its
 * spelling keeps traj's records byte-compatible with theirs.
 */
export function pythonJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (value instanceof PythonNumber) return value.toPython();
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(', ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, item]) => item !== undefined);
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}: ${pythonJson(item)}`).join(', ')}}`;
  }
  if (typeof value === 'number' && !Number.isFinite(value)) return 'null';
  return JSON.stringify(value);
}
