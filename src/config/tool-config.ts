import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { trajHome } from '../util/paths.js';
import { AuxiliaryConfigSchema, type AuxiliaryConfig } from './auxiliary.js';
import { BrowserConfigSchema, type BrowserConfig } from './browser.js';
import { CodeExecutionConfigSchema, type CodeExecutionConfig } from './code-execution.js';
import { DelegationConfigSchema, type DelegationConfig } from './delegation.js';
import { readConfigFile, validate } from './load.js';
import { TerminalConfigSchema, type TerminalConfig } from './terminal.js';
import { WebConfigSchema, type WebConfig } from './web.js';

/** The part of a config file the tools that reach outside services read; other keys belong to others. */
const ToolConfigFileSchema = z.looseObject({
  web: z.record(z.string(), z.unknown()).optional(),
  auxiliary: z.record(z.string(), z.unknown()).optional(),
  browser: z.record(z.string(), z.unknown()).optional(),
  delegation: z.record(z.string(), z.unknown()).optional(),
  code_execution: z.record(z.string(), z.unknown()).optional(),
  terminal: z.record(z.string(), z.unknown()).optional(),
});

export interface ToolConfig {
  web: WebConfig;
  auxiliary: AuxiliaryConfig | undefined;
  browser: BrowserConfig;
  delegation: DelegationConfig;
  code_execution: CodeExecutionConfig;
  terminal: TerminalConfig;
  /** The files read, lowest precedence first. */
  files: string[];
}

/**
 * `web:`, `auxiliary:` and `browser:` from TRAJ_HOME/config.yaml overlaid by those of a run config (or flags):
 * keys merge one level deep (web.search and web.extract two), so a run config may set just
 * `web.allow_private`. Validated strictly after the merge; errors name the files.
 */
export function loadToolConfig(
  runConfigFile?: string,
  overlay: {
    web?: unknown;
    auxiliary?: unknown;
    browser?: unknown;
    delegation?: unknown;
    code_execution?: unknown;
    terminal?: unknown;
  } = {},
): ToolConfig {
  const files: string[] = [];
  const layers: Array<z.infer<typeof ToolConfigFileSchema>> = [];
  const home = join(trajHome(), 'config.yaml');
  for (const file of [home, runConfigFile]) {
    if (!file || (file === home && !existsSync(home))) continue;
    layers.push(validate(ToolConfigFileSchema, readConfigFile(file), file));
    files.push(file);
  }
  layers.push(overlay as z.infer<typeof ToolConfigFileSchema>);
  const where = files.length > 0 ? files.join(' + ') : 'config';
  const web = layers.reduce<Record<string, unknown>>((merged, layer) => mergeWeb(merged, layer.web), {});
  const auxiliary = layers.reduce<Record<string, unknown> | undefined>(
    (merged, layer) => (layer.auxiliary ? { ...merged, ...layer.auxiliary } : merged),
    undefined,
  );
  const browser = layers.reduce<Record<string, unknown>>((merged, layer) => ({ ...merged, ...layer.browser }), {});
  const delegation = layers.reduce<Record<string, unknown>>(
    (merged, layer) => ({ ...merged, ...layer.delegation }),
    {},
  );
  const codeExecution = layers.reduce<Record<string, unknown>>(
    (merged, layer) => ({ ...merged, ...layer.code_execution }),
    {},
  );
  const terminal = layers.reduce<Record<string, unknown>>((merged, layer) => ({ ...merged, ...layer.terminal }), {});
  return {
    web: validate(WebConfigSchema, web, `${where}: web`),
    terminal: validate(TerminalConfigSchema, terminal, `${where}: terminal`),
    browser: validate(BrowserConfigSchema, browser, `${where}: browser`),
    delegation: validate(DelegationConfigSchema, delegation, `${where}: delegation`),
    code_execution: validate(CodeExecutionConfigSchema, codeExecution, `${where}: code_execution`),
    auxiliary: auxiliary === undefined ? undefined : validate(AuxiliaryConfigSchema, auxiliary, `${where}: auxiliary`),
    files,
  };
}

function mergeWeb(base: Record<string, unknown>, layer: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!layer) return base;
  const merged = { ...base, ...layer };
  for (const nested of ['search', 'extract']) {
    if (isObject(base[nested]) && isObject(layer[nested])) merged[nested] = { ...base[nested], ...layer[nested] };
  }
  return merged;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
