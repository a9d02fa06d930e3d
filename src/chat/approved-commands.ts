import { existsSync, readFileSync } from 'node:fs';
import { isMap, isSeq, parseDocument } from 'yaml';
import { checkHomeConfig, homeConfigFile } from '../config/home-config.js';
import { ConfigError } from '../errors.js';
import { writeFileAtomically } from '../util/atomic-write.js';

/** The key under which "always" approvals live in TRAJ_HOME/config.yaml: a list of pattern ids. */
export const APPROVED_COMMANDS_KEY = 'approved_commands';

function parse(file: string) {
  const document = parseDocument(readFileSync(file, 'utf8'));
  if (document.errors.length > 0) {
    const first = document.errors[0]!;
    const position = first.linePos?.[0];
    throw new ConfigError(
      `${file}${position ? `:${position.line}:${position.col}` : ''}: YAML syntax error: ${first.message.split('\n')[0]}`,
      {
        code: 'config_syntax',
        details: { file },
      },
    );
  }
  if (document.contents !== null && !isMap(document.contents)) {
    throw new ConfigError(`${file}: expected a mapping of settings at the top level`, {
      code: 'config_invalid',
      details: { file },
    });
  }
  checkHomeConfig(document.toJS(), file);
  return document;
}

/** The pattern ids approved "always"; none when the file or the key is absent. */
export function loadApprovedCommands(file = homeConfigFile()): string[] {
  if (!existsSync(file)) return [];
  const value = parse(file).get(APPROVED_COMMANDS_KEY);
  if (value === undefined || value === null) return [];
  if (!isSeq(value) || !value.items.every((item) => typeof (item as { value?: unknown }).value === 'string')) {
    throw new ConfigError(`${file}: ${APPROVED_COMMANDS_KEY}: expected a list of pattern ids (strings)`, {
      code: 'config_invalid',
      details: { file },
    });
  }
  return value.items.map((item) => String((item as { value: string }).value));
}

/**
 * Add a pattern id to the "always" list, keeping every other key (and comments) of the file as
 * it was. Written to a temporary file and renamed, so a crash never leaves half a config.
 */
export function saveApprovedCommand(id: string, file = homeConfigFile()): string[] {
  const approved = loadApprovedCommands(file);
  if (approved.includes(id)) return approved;
  const next = [...approved, id];
  const document = existsSync(file) ? parse(file) : parseDocument('{}');
  document.set(APPROVED_COMMANDS_KEY, next);
  const text = String(document);
  writeFileAtomically(file, text === '{}\n' ? '' : text);
  return next;
}
