import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { readConfigFile, validate } from '../config/load.js';
import { ConfigError, errorMessage } from '../errors.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { McpServersSchema } from '../tools/mcp/config.js';
import type { Tool } from '../tools/tool.js';
import { sha256 } from '../util/hash.js';
import { shellQuote } from '../util/shell.js';
import { EnvironmentConfigSchema } from './environment-config.js';
import { DEFAULT_STOP_TOKEN, DEFAULT_USER_TURNS, defineEnvironment, type Environment } from './environment.js';
import { readItems } from '../dataset/index.js';
import { buildScorers, ReducerSchema, ScorerConfigSchema, scoreWithScorers } from './scorers/index.js';
import { fieldValue, renderTemplate, templateFields } from './template.js';

const template = z.string().min(1);

const SimulatedUserSchema = z.strictObject({
  model: z.string().min(1).optional().describe("the user model (default: the policy's)"),
  base_url: z.string().url().optional().describe("its endpoint (default: the policy endpoint's)"),
  api_key_env: z.string().optional(),
  temperature: z.number().min(0).max(2).optional(),
  persona: template.default('{{persona}}').describe('who the user is (a template over the item)'),
  goal: template.default('{{goal}}').describe('what the user wants (a template)'),
  instructions: template.optional().describe('the whole system prompt instead of the built-in one (a template)'),
  stop_token: z.string().min(1).default(DEFAULT_STOP_TOKEN),
  max_turns: z.number().int().positive().default(DEFAULT_USER_TURNS).describe('user replies at most'),
});

/** A declarative environment: `environment.yaml` (or any .yaml): data, prompt, scorers, no code. */
export const YamlEnvironmentSchema = EnvironmentConfigSchema.extend({
  name: z.string().regex(/^[\w.-]+$/, 'use letters, digits, _, . and -'),
  version: z.union([z.string().min(1), z.number()]).transform(String),
  description: z.string().optional(),
  items: z
    .array(z.record(z.string(), z.unknown()))
    .min(1)
    .optional()
    .describe('items written inline (instead of dataset)'),
  id: template.optional().describe("the item's key (default: its id field when it has one)"),
  category: template.optional().describe('per-category breakdowns in the report'),
  prompt: template.describe('the first user message (a template over the item)'),
  fields: z.array(z.string()).optional().describe('item fields copied into the record (source.fields)'),
  files: z
    .record(z.string(), z.string())
    .optional()
    .describe('sandbox path: local file or folder (relative to this file), uploaded before setup'),
  setup: z.array(template).optional().describe('shell commands run in the sandbox before the agent (templates)'),
  tools: z.string().optional().describe('a JavaScript module (relative to this file) exporting tools'),
  mcp_servers: McpServersSchema.optional().describe('MCP servers the environment starts; their tools are offered'),
  terminal_tools: z.array(z.string()).optional().describe('tools whose call ends the conversation'),
  user: SimulatedUserSchema.optional().describe('a simulated user answering the agent'),
  scorers: z.array(ScorerConfigSchema).min(1, 'give at least one scorer'),
  reducer: ReducerSchema.default('mean'),
});
export type YamlEnvironmentConfig = z.infer<typeof YamlEnvironmentSchema>;

type Item = Record<string, unknown>;

export function isYamlEnvironmentPath(path: string): boolean {
  return /\.ya?ml$/i.test(path);
}

const DEFAULT_USER_INSTRUCTIONS = [
  'You are a user talking to an assistant. Stay in character; never say you are simulated or an AI.',
  'Who you are: {{persona}}',
  'What you want: {{goal}}',
  'Write only what this user would write next, one short message at a time, giving details only when asked.',
  'When your goal is met, or the assistant cannot help, reply with {{stop_token}} alone.',
].join('\n');

/** Load and check a YAML environment; the scorers, templates and tools module are checked here, before any item runs. */
export async function loadYamlEnvironment(path: string): Promise<Environment> {
  const config = validate(YamlEnvironmentSchema, readConfigFile(path), path);
  const folder = dirname(path);
  let scorers: ReturnType<typeof buildScorers>;
  try {
    scorers = buildScorers(config.scorers, 'scorers');
  } catch (error) {
    throw new ConfigError(`${path}: ${errorMessage(error)}`, { code: 'config_invalid' });
  }
  const tools = config.tools ? await loadToolsModule(resolve(folder, config.tools), `${path}: tools`) : undefined;
  if (!config.dataset && !config.items)
    throw new ConfigError(`${path}: give the items: a dataset file (dataset:) or a list (items:)`, {
      code: 'config_invalid',
    });
  const itemSchema = itemSchemaFor(config);
  const dataset = config.dataset && resolve(folder, config.dataset);
  const text = (where: string, value: string, item: Item) => renderTemplate(value, item, `${path}: ${where}`);
  const environment = defineEnvironment<Item>({
    name: config.name,
    version: config.version,
    description: config.description,
    async *items(options) {
      const source = options.dataset ?? dataset;
      if (source) yield* readItems(source, itemSchema, { limit: options.limit });
      else yield* checkedInlineItems(config.items!, itemSchema, path).slice(0, options.limit);
    },
    id: (item) => (config.id ? text('id', config.id, item) : defaultId(item)),
    prompt: (item) => text('prompt', config.prompt, item),
    systemPrompt: config.system_prompt,
    toolsets: config.toolsets,
    distribution: config.distribution,
    maxTurns: config.max_turns,
    passThreshold: config.pass_threshold,
    category: config.category ? (item) => text('category', config.category!, item) : undefined,
    fields: config.fields
      ? (item) => Object.fromEntries(config.fields!.map((name) => [name, fieldValue(item, name) ?? null]))
      : undefined,
    setup: config.files || config.setup ? (item, sandbox) => setUp(config, folder, item, sandbox, path) : undefined,
    reward: (item, result, context) => scoreWithScorers(scorers, config.reducer, item, result, context),
    judge: config.judge?.rubric ? { rubric: config.judge.rubric, scale: config.judge.scale } : undefined,
    tools,
    mcpServers: config.mcp_servers,
    terminalTools: config.terminal_tools,
    user: config.user && simulatedUser(config.user, path),
    definitionHash: definitionHash(path, config),
  });
  // Items are plain JSON objects: what the run hands back to these hooks is what items() yielded.
  return environment as unknown as Environment;
}

function defaultId(item: Item): string | undefined {
  const id = item.id;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;
}

function simulatedUser(user: NonNullable<YamlEnvironmentConfig['user']>, path: string): Environment<Item>['user'] {
  const instructions = user.instructions ?? DEFAULT_USER_INSTRUCTIONS;
  return {
    endpoint: {
      ...(user.model ? { model: user.model } : {}),
      ...(user.base_url ? { base_url: user.base_url } : {}),
      ...(user.api_key_env ? { api_key_env: user.api_key_env } : {}),
      ...(user.temperature !== undefined ? { temperature: user.temperature } : {}),
    },
    system: (item) =>
      renderTemplate(
        instructions,
        {
          ...item,
          persona: renderTemplate(user.persona, item, `${path}: user.persona`),
          goal: renderTemplate(user.goal, item, `${path}: user.goal`),
          stop_token: user.stop_token,
        },
        `${path}: user.instructions`,
      ),
    stopToken: user.stop_token,
    maxTurns: user.max_turns,
  };
}

/** The fields the templates name must be in every item: a missing one is a dataset error naming its line. */
function itemSchemaFor(config: YamlEnvironmentConfig): z.ZodType<Item> {
  const templates = [
    config.prompt,
    config.id,
    config.category,
    ...(config.setup ?? []),
    ...(config.user ? [config.user.persona, config.user.goal] : []),
    ...config.scorers.flatMap((scorer) => Object.values(scorer).filter((value) => typeof value === 'string')),
    ...config.scorers.flatMap((scorer) =>
      'expected' in scorer && Array.isArray(scorer.expected) ? scorer.expected : [],
    ),
  ].filter((value): value is string => typeof value === 'string');
  const required = [...new Set(templates.flatMap(templateFields))].filter(
    (name) => !(config.user && ['persona', 'goal', 'stop_token'].includes(name) && config.user.instructions),
  );
  return z.looseObject({}).superRefine((item, context) => {
    for (const name of required) {
      const value = fieldValue(item, name);
      if (value === undefined || value === null)
        context.addIssue({
          code: 'custom',
          path: name.split('.'),
          message: `missing (the environment names {{${name}}})`,
        });
    }
  });
}

function checkedInlineItems(items: Item[], schema: z.ZodType<Item>, path: string): Item[] {
  return items.map((item, index) => validate(schema, item, `${path}: items.${index}`));
}

async function setUp(config: YamlEnvironmentConfig, folder: string, item: Item, sandbox: Sandbox, path: string) {
  for (const [remote, local] of Object.entries(config.files ?? {}))
    await sandbox.upload(resolve(folder, local), remote);
  for (const [index, command] of (config.setup ?? []).entries()) {
    const rendered = renderTemplate(command, item, `${path}: setup.${index}`);
    const result = await sandbox.exec(rendered, { timeoutMs: 120_000 });
    if (result.exitCode !== 0)
      throw new Error(
        `${path}: setup.${index} (${shellQuote(rendered).slice(0, 200)}) exited ${result.exitCode}: ${result.stderr.trim().slice(0, 500)}`,
      );
  }
}

/** What a tools module must export: tools with a name, a description, zod parameters and a run function. */
async function loadToolsModule(file: string, where: string): Promise<Tool[]> {
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (error) {
    throw new ConfigError(`${where}: cannot load ${file} (${errorMessage(error)})`, { code: 'config_missing' });
  }
  const exported = module.tools ?? module.default;
  // A function is handed traj's own zod: the module then needs no zod of its own to resolve (a copied
  // example folder has no node_modules), and its schemas are instances of the zod traj checks with.
  const tools = typeof exported === 'function' ? await exported({ z }) : exported;
  if (!Array.isArray(tools) || tools.length === 0)
    throw new ConfigError(
      `${where}: ${file} exports no tools (expected \`export function tools({ z }) { return [...] }\`, or an array)`,
      {
        code: 'environment_invalid',
      },
    );
  return tools.map((tool: unknown, index) => checkedTool(tool, `${where}: ${file}: tools[${index}]`));
}

function checkedTool(value: unknown, where: string): Tool {
  const tool = value as Partial<Tool> & { parameters?: unknown };
  const problems = [
    typeof tool?.name === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(tool.name) ? '' : 'name (letters, digits, _ and -)',
    typeof tool?.description === 'string' && tool.description ? '' : 'description',
    tool?.parameters instanceof z.ZodObject ? '' : 'parameters (a z.object from the same zod traj uses)',
    typeof tool?.run === 'function' ? '' : 'run (a function)',
  ].filter(Boolean);
  if (problems.length > 0)
    throw new ConfigError(`${where}: expected ${problems.join(', ')}`, { code: 'environment_invalid' });
  return { ...(tool as Tool), toolset: tool.toolset ?? 'environment' };
}

/** The YAML text and its tools module's text: editing either is a changed environment for resume. */
function definitionHash(path: string, config: YamlEnvironmentConfig): string {
  const parts = [readFileSync(path, 'utf8')];
  if (config.tools) parts.push(readFileSync(resolve(dirname(path), config.tools), 'utf8'));
  return sha256(parts.join('\0'));
}
