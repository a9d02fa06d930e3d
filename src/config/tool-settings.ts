import { z } from 'zod';
import { AuxiliaryConfigSchema } from './auxiliary.js';
import { BrowserConfigSchema } from './browser.js';
import { ClarifyConfigSchema } from './clarify.js';
import { CodeExecutionConfigSchema } from './code-execution.js';
import { DelegationConfigSchema } from './delegation.js';
import { TerminalConfigSchema } from './terminal.js';
import { WebConfigSchema } from './web.js';

/**
 * The settings of the tools, one section per concern, as every surface reads them: TRAJ_HOME/config.yaml,
 * a run config and the rollout settings all take their sections from this one schema, so a section
 * (or a field) added here is accepted by each of them and reaches every tool through
 * ToolServices.settings without further plumbing.
 */
export const ToolSettingsSchema = z.strictObject({
  web: WebConfigSchema.prefault({}).describe('web tools: network policy, search backend, extraction limits'),
  auxiliary: AuxiliaryConfigSchema.optional().describe(
    'models tools use beside the agent: vision, summarizer, image, moa (unset fields from the main endpoint)',
  ),
  browser: BrowserConfigSchema.prefault({}).describe('browser toolset: Chromium executable or CDP URL, time limits'),
  delegation: DelegationConfigSchema.prefault({}).describe("delegate_task: the child agents' turn limit"),
  code_execution: CodeExecutionConfigSchema.prefault({}).describe(
    'execute_code: tools a script may call, call and time limits, output kept',
  ),
  terminal: TerminalConfigSchema.prefault({}).describe(
    'terminal tool: persistent (default true, one long-lived shell per rollout) or false (a fresh shell per call)',
  ),
  clarify: ClarifyConfigSchema.prefault({}).describe('clarify: the answer given where no person is asked'),
});
export type ToolSettings = z.infer<typeof ToolSettingsSchema>;
export type ToolSettingsInput = z.input<typeof ToolSettingsSchema>;
export type ToolSectionName = keyof ToolSettings;

export const TOOL_SECTION_NAMES = Object.keys(ToolSettingsSchema.shape) as ToolSectionName[];
export const DEFAULT_TOOL_SETTINGS: ToolSettings = ToolSettingsSchema.parse({});

/** Sections nested one level deeper whose keys merge too (a run config may set just web.search.limit). */
const NESTED_MERGE: Partial<Record<ToolSectionName, string[]>> = { web: ['search', 'extract'] };

/**
 * Merge layers of tool sections, lowest precedence first (see mergeSection). The layers are raw
 * (unvalidated, without defaults), so a later layer changes only what it names.
 */
export function mergeToolSections(layers: ReadonlyArray<Record<string, unknown> | undefined>): Record<string, unknown> {
  const merged: Record<string, Record<string, unknown>> = {};
  for (const name of TOOL_SECTION_NAMES) {
    const section = mergeSection(layers, name, NESTED_MERGE[name]);
    if (section) merged[name] = section;
  }
  return merged;
}

/**
 * One section over layers, lowest precedence first: its keys merge one level deep (the `nested`
 * ones two), any other value is replaced whole; undefined when no layer has it.
 */
export function mergeSection(
  layers: ReadonlyArray<Record<string, unknown> | undefined>,
  name: string,
  nested: readonly string[] = [],
): Record<string, unknown> | undefined {
  let merged: Record<string, unknown> | undefined;
  for (const layer of layers) {
    const section = layer?.[name];
    if (!isObject(section)) continue;
    const base = merged ?? {};
    merged = { ...base, ...section };
    for (const key of nested) {
      if (isObject(base[key]) && isObject(section[key])) merged[key] = { ...base[key], ...section[key] };
    }
  }
  return merged;
}

/** The tool sections of a parsed config file, nothing else. */
export function toolSectionsOf(value: unknown): Record<string, unknown> {
  if (!isObject(value)) return {};
  return Object.fromEntries(TOOL_SECTION_NAMES.filter((name) => name in value).map((name) => [name, value[name]]));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
