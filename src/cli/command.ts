import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigError } from '../errors.js';
import { closestMatch } from '../util/closest-match.js';

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  /** Shown in --help. */
  description: string;
  /** Shown in --help, e.g. "N" or "FILE". */
  value?: string;
  default?: string | boolean;
}

export interface CommandDefinition {
  name: string;
  summary: string;
  /** e.g. "traj ask PROMPT [options]" */
  usage: string;
  options: Record<string, OptionSpec>;
  /** Extra help text: examples, notes. */
  details?: string;
  allowPositionals?: boolean;
  run(input: ParsedCommand): Promise<number>;
}

export interface ParsedCommand {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

export function formatHelp(command: CommandDefinition): string {
  const lines = [`${command.summary}`, '', `usage: ${command.usage}`, '', 'options:'];
  const entries = Object.entries({
    ...command.options,
    help: { type: 'boolean', short: 'h', description: 'show this help' } as OptionSpec,
  });
  const left = entries.map(
    ([name, spec]) =>
      `  ${spec.short ? `-${spec.short}, ` : '    '}--${name}${spec.type === 'string' ? ` ${spec.value ?? 'VALUE'}` : ''}`,
  );
  const width = Math.max(...left.map((text) => text.length)) + 2;
  entries.forEach(([, spec], index) => {
    const suffix = spec.default !== undefined && spec.default !== false ? ` (default: ${String(spec.default)})` : '';
    lines.push(`${left[index]!.padEnd(width)}${spec.description}${suffix}`);
  });
  if (command.details) lines.push('', command.details.trimEnd());
  return lines.join('\n');
}

/** Parse argv for one command; unknown flags are a ConfigError naming the flag. */
export function parseCommand(command: CommandDefinition, argv: string[]): ParsedCommand & { help: boolean } {
  const options: NonNullable<ParseArgsConfig['options']> = { help: { type: 'boolean', short: 'h' } };
  for (const [name, spec] of Object.entries(command.options)) {
    options[name] = {
      type: spec.type,
      ...(spec.short ? { short: spec.short } : {}),
      ...(spec.multiple ? { multiple: true } : {}),
    };
  }
  try {
    const parsed = parseArgs({
      args: argv,
      options,
      allowPositionals: command.allowPositionals ?? false,
      strict: true,
    });
    const values = parsed.values as ParsedCommand['values'];
    return { values, positionals: parsed.positionals, help: Boolean(values.help) };
  } catch (error) {
    throw new ConfigError(
      `traj ${command.name}: ${usageProblem(command, error as Error & { code?: string })} (see 'traj ${command.name} --help')`,
      { code: 'cli_usage' },
    );
  }
}

/** parseArgs' complaint in traj's words; an unknown flag names the nearest real one. */
function usageProblem(command: CommandDefinition, error: Error & { code?: string }): string {
  const unknown =
    error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /Unknown option '([^']+)'/.exec(error.message)?.[1] : undefined;
  if (unknown === undefined) return error.message;
  const flags = ['help', ...Object.keys(command.options)].map((name) => `--${name}`);
  const near = unknown.startsWith('--') ? closestMatch(unknown, flags) : undefined;
  return `unknown flag ${unknown}${near ? ` (did you mean ${near}?)` : ''}`;
}

export function stringOption(values: ParsedCommand['values'], name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

/** A positive integer flag, with a ConfigError naming the flag when it is not one. */
export function integerOption(
  values: ParsedCommand['values'],
  name: string,
  options: { min?: number } = {},
): number | undefined {
  const raw = stringOption(values, name);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  const min = options.min ?? 1;
  if (!Number.isInteger(value) || value < min) {
    throw new ConfigError(`flag --${name}: expected a whole number ≥ ${min}, got '${raw}'`, { code: 'cli_usage' });
  }
  return value;
}

export function listOption(values: ParsedCommand['values'], name: string): string[] | undefined {
  const raw = stringOption(values, name);
  if (raw === undefined) return undefined;
  return raw
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/** The endpoint flags every command that calls a model takes. */
export const ENDPOINT_OPTIONS: Record<string, OptionSpec> = {
  'base-url': {
    type: 'string',
    value: 'URL',
    description: 'OpenAI-compatible base URL (else $OPENAI_BASE_URL, or OpenRouter with $OPENROUTER_API_KEY)',
  },
  model: { type: 'string', value: 'NAME', description: 'model name (else $TRAJ_MODEL)' },
  'api-key-env': {
    type: 'string',
    value: 'VAR',
    description: 'environment variable holding the API key (default OPENAI_API_KEY)',
  },
  'tool-call-format': {
    type: 'string',
    value: 'native|hermes',
    description: 'how the endpoint returns tool calls (hermes: <tool_call> blocks in content)',
  },
};
