import type { z } from 'zod';
import { ConfigError } from '../errors.js';

/**
 * Turn zod issues into one message naming the file, the path inside it and what was expected.
 * `where` is the file (or "flag --x") the value came from.
 */
export function describeIssues(where: string, error: z.ZodError): string {
  const lines = error.issues.map((issue) => {
    const path = issue.path.length ? issue.path.map(String).join('.') : '(top level)';
    return `  ${where}: ${path}: ${issue.message}`;
  });
  return `invalid configuration:\n${lines.join('\n')}`;
}

export function validate<S extends z.ZodType>(schema: S, value: unknown, where: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new ConfigError(describeIssues(where, result.error), { code: 'config_invalid', details: { where } });
  }
  return result.data;
}
