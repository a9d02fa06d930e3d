import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { ConfigError } from '../errors.js';
import { lazyRequire } from '../util/lazy-require.js';
import { validate } from './validate.js';

export { describeIssues, knownKeysAt, validate } from './validate.js';

const yaml = lazyRequire<typeof import('yaml')>('yaml');

/** Parse YAML (or JSON, a subset) text; syntax errors name the file, line and column. */
export function parseYaml(text: string, file: string): unknown {
  const document = yaml().parseDocument(text, { prettyErrors: true });
  if (document.errors.length > 0) {
    const first = document.errors[0]!;
    const position = first.linePos?.[0];
    const at = position ? `${file}:${position.line}:${position.col}` : file;
    throw new ConfigError(`${at}: YAML syntax error: ${first.message.split('\n')[0]}`, {
      code: 'config_syntax',
      details: { file },
    });
  }
  return document.toJS();
}

export function readConfigFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`${file}: cannot read the file (${(error as NodeJS.ErrnoException).code ?? String(error)})`, {
      code: 'config_missing',
      details: { file },
    });
  }
  return parseYaml(text, file);
}

/** Read and validate a YAML/JSON config file against a zod schema. */
export function loadConfigFile<S extends z.ZodType>(schema: S, file: string): z.infer<S> {
  return validate(schema, readConfigFile(file), file);
}
