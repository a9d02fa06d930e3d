import { z } from 'zod';
import { ConfigError, errorMessage } from '../errors.js';
import type { ToolSpec } from '../model/messages.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { CallToolFunction, DelegateFunction } from './nested.js';
import type { ToolServices } from './services.js';
import { confinePaths } from './confined-path.js';
import { ToolFailure } from './tool-failure.js';

export { ToolFailure } from './tool-failure.js';

/** What a tool sees when it runs: the rollout's sandbox, its abort signal and per-run state. */
export interface ToolContext {
  sandbox: Sandbox;
  signal: AbortSignal;
  /** Per-rollout state shared by the tools of one agent run (e.g. the todo list). */
  state: Map<string, unknown>;
  /** The id of the call being answered. */
  callId: string;
  /** Environment of the process choosing tools (API keys for `available`), never the sandbox's. */
  env: NodeJS.ProcessEnv;
  /** Settings, auxiliary models and the web cache for tools that reach outside services. */
  services?: ToolServices;
  /** Runs a child agent on this sandbox (delegate_task); the loop sets it, so tools/ never imports agent/. */
  delegate?: DelegateFunction;
  /** Calls another of the run's tools (execute_code); the loop sets it and keeps each call under this one. */
  callTool?: CallToolFunction;
  /** The tools of this run, as `callTool` reaches them. */
  runTools?: readonly Tool[];
}

/** Tools of this toolset get every `path` argument through the sandbox's confinement check first. */
export const FILE_TOOLSET = 'file';

export type AvailabilityContext = Pick<ToolContext, 'env' | 'services'>;

export type ToolOutput = string | Record<string, unknown> | unknown[];

interface ToolBase {
  name: string;
  /** The named bundle this tool belongs to (`terminal`, `file`, `mcp:github`, …). */
  toolset: string;
  description: string;
  /** Bumped when behaviour changes; part of the run fingerprint. */
  version?: string;
  /** `true`, or a reason why the tool cannot be offered here (e.g. a missing API key). */
  available?: (context: AvailabilityContext) => true | string;
  /**
   * Its `path` arguments reach the sandbox only through Sandbox.readFile/writeFile, which apply
   * the confinement check themselves: the registry's check before the call would repeat it.
   */
  confinesOwnPaths?: boolean;
}

export interface ZodTool<S extends z.ZodObject = z.ZodObject> extends ToolBase {
  parameters: S;
  run: (args: z.infer<S>, context: ToolContext) => Promise<ToolOutput> | ToolOutput;
}

/** A tool whose JSON Schema comes from elsewhere (an MCP server); arguments pass through unchecked. */
export interface JsonSchemaTool extends ToolBase {
  inputSchema: Record<string, unknown>;
  run: (args: Record<string, unknown>, context: ToolContext) => Promise<ToolOutput> | ToolOutput;
}

export type Tool = ZodTool | JsonSchemaTool;

export function defineTool<S extends z.ZodObject>(tool: ZodTool<S>): Tool {
  return tool as unknown as Tool;
}

export function isZodTool(tool: Tool): tool is ZodTool {
  return 'parameters' in tool;
}

const specs = new WeakMap<Tool, ToolSpec>();

/** The tool as offered to the model; computed once per tool (JSON Schema generation is costly). */
export function toolSpec(tool: Tool): ToolSpec {
  let spec = specs.get(tool);
  if (!spec) {
    spec = buildToolSpec(tool);
    specs.set(tool, spec);
  }
  return spec;
}

function buildToolSpec(tool: Tool): ToolSpec {
  const parameters = isZodTool(tool)
    ? (z.toJSONSchema(tool.parameters, { io: 'input' }) as Record<string, unknown>)
    : tool.inputSchema;
  const { $schema: _ignored, ...schema } = parameters as Record<string, unknown> & { $schema?: unknown };
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: withoutSafeIntegerBounds(schema) },
  };
}

/**
 * zod writes its safe-integer range (±9007199254740991) into every `z.number().int()`: noise sent
 * to the model on every request and saved in every record. Bounds a tool sets itself are kept.
 */
function withoutSafeIntegerBounds<T>(value: T): T {
  if (Array.isArray(value)) return value.map(withoutSafeIntegerBounds) as T;
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>).filter(
    ([key, item]) =>
      !(
        (key === 'maximum' && item === Number.MAX_SAFE_INTEGER) ||
        (key === 'minimum' && item === Number.MIN_SAFE_INTEGER)
      ),
  );
  return Object.fromEntries(entries.map(([key, item]) => [key, withoutSafeIntegerBounds(item)])) as T;
}

/** Loads the tools of a toolset declared before its code is needed (the built-ins, see builtin.ts). */
export type ToolsetLoader = () => Promise<readonly Tool[]>;

/**
 * All tools traj knows in this process, grouped into toolsets. Instances, not a global.
 *
 * A toolset may be declared with a loader: its name is valid at once, and its tools are imported
 * only by `load` (a run that offers `file` never loads the browser's code). Tools are listed in
 * the order their toolsets were declared or first registered, however the loads interleave, so a
 * rollout is offered the same tools in the same order whatever loaded first.
 */
export class ToolRegistry {
  private readonly tools = new Map<string, Tool>();
  /** Toolsets whose tools are only known once loaded or once a server starts (MCP); valid names before that. */
  private readonly declared = new Set<string>();
  private readonly loaders = new Map<string, ToolsetLoader>();
  private readonly loading = new Map<string, Promise<void>>();
  private readonly loaded = new Set<string>();
  private readonly ranks = new Map<string, number>();
  private ordered: Tool[] | undefined;

  declareToolset(name: string, load?: ToolsetLoader): this {
    this.declared.add(name);
    this.rankOf(name);
    if (load) this.loaders.set(name, load);
    return this;
  }

  /** Import the tools of the named toolsets that have a loader and are not loaded yet; other names are ignored. */
  async load(toolsets: readonly string[]): Promise<this> {
    await Promise.all(toolsets.map((name) => this.loadOne(name)));
    return this;
  }

  private loadOne(name: string): Promise<void> {
    const load = this.loaders.get(name);
    if (!load) return Promise.resolve();
    let pending = this.loading.get(name);
    if (!pending) {
      pending = load().then((tools) => {
        this.register(...tools);
        this.loaded.add(name);
      });
      // A failed import is not remembered: the next load tries again and reports its own error.
      pending.catch(() => this.loading.delete(name));
      this.loading.set(name, pending);
    }
    return pending;
  }

  register(...tools: Tool[]): this {
    for (const tool of tools) {
      if (this.tools.has(tool.name)) {
        throw new ConfigError(
          `tool '${tool.name}' is registered twice (toolsets '${this.tools.get(tool.name)!.toolset}' and '${tool.toolset}')`,
          {
            code: 'tool_duplicate',
          },
        );
      }
      this.rankOf(tool.toolset);
      this.tools.set(tool.name, tool);
    }
    this.ordered = undefined;
    return this;
  }

  private rankOf(toolset: string): number {
    let rank = this.ranks.get(toolset);
    if (rank === undefined) {
      rank = this.ranks.size;
      this.ranks.set(toolset, rank);
    }
    return rank;
  }

  get(name: string): Tool | undefined {
    return this.tools.get(name);
  }

  /** Every loaded tool, by toolset in declaration order, then in registration order. */
  all(): Tool[] {
    return [...this.listed()];
  }

  /** The order of `all`, kept until the next registration; the lookups below read it without a copy. */
  private listed(): readonly Tool[] {
    this.ordered ??= [...this.tools.values()].sort((a, b) => this.rankOf(a.toolset) - this.rankOf(b.toolset));
    return this.ordered;
  }

  toolsetNames(): string[] {
    return [...new Set([...this.listed().map((tool) => tool.toolset), ...this.declared])].sort();
  }

  hasToolset(name: string): boolean {
    return this.declared.has(name) || this.listed().some((tool) => tool.toolset === name);
  }

  /** Throws a ConfigError listing the known toolsets when a name is unknown. */
  assertToolsets(names: readonly string[], where = 'toolsets'): void {
    const unknown = names.filter((name) => !this.hasToolset(name));
    if (unknown.length > 0) {
      throw new ConfigError(
        `${where}: unknown toolset${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `'${n}'`).join(', ')}; known toolsets: ${this.toolsetNames().join(', ')}`,
        { code: 'toolset_unknown', details: { unknown, known: this.toolsetNames() } },
      );
    }
  }

  /**
   * A toolset asked about before its tools were loaded would look empty (nothing to offer, nothing
   * unavailable): a harness bug, never a run without those tools.
   */
  private assertLoaded(toolsets: readonly string[]): void {
    const unloaded = toolsets.filter((name) => this.loaders.has(name) && !this.loaded.has(name));
    if (unloaded.length > 0)
      throw new Error(`toolsets ${unloaded.join(', ')} are declared but not loaded: await registry.load() first`);
  }

  /** Why a toolset cannot be offered here, or undefined when every tool in it is available. */
  unavailableReason(toolset: string, context: AvailabilityContext): string | undefined {
    this.assertLoaded([toolset]);
    for (const tool of this.listed()) {
      if (tool.toolset !== toolset || !tool.available) continue;
      const verdict = tool.available(context);
      if (verdict !== true) return `${tool.name}: ${verdict}`;
    }
    return undefined;
  }

  /** The tools of the named toolsets that cannot be offered here, each with its reason. */
  unavailableTools(
    toolsets: readonly string[],
    context: AvailabilityContext,
  ): Array<{ name: string; toolset: string; reason: string }> {
    this.assertLoaded(toolsets);
    const wanted = new Set(toolsets);
    return this.listed().flatMap((tool) => {
      if (!wanted.has(tool.toolset) || !tool.available) return [];
      const verdict = tool.available(context);
      return verdict === true ? [] : [{ name: tool.name, toolset: tool.toolset, reason: verdict }];
    });
  }

  /** Every tool of the named toolsets, available here or not, in the order `all` lists them. */
  toolsOf(toolsets: readonly string[]): Tool[] {
    this.assertLoaded(toolsets);
    const wanted = new Set(toolsets);
    return this.listed().filter((tool) => wanted.has(tool.toolset));
  }

  /** The available tools of the named toolsets, in the order `all` lists them. */
  select(toolsets: readonly string[], context: AvailabilityContext): Tool[] {
    this.assertToolsets(toolsets);
    this.assertLoaded(toolsets);
    const wanted = new Set(toolsets);
    return this.listed().filter((tool) => wanted.has(tool.toolset) && (tool.available?.(context) ?? true) === true);
  }
}

/** Render any tool output as the string the model reads. */
export function renderOutput(output: ToolOutput): string {
  return typeof output === 'string' ? output : JSON.stringify(output);
}

export function toolError(message: string, hint?: string): string {
  return JSON.stringify(hint ? { error: message, hint } : { error: message });
}

export interface ToolCallInput {
  id: string;
  name: string;
  /** Raw JSON text as the model produced it. */
  arguments: string;
  /** Set when the call itself could not be parsed (hermes `<tool_call>` block). */
  parseError?: string;
}

export interface ToolCallOutcome {
  content: string;
  ok: boolean;
  ms: number;
}

/**
 * Run one call. Never throws: an unknown tool, arguments that are not JSON, a schema violation
 * and a throwing tool all become an error result the model can read and fix.
 */
export async function executeToolCall(
  tools: readonly Tool[],
  call: ToolCallInput,
  context: ToolContext,
): Promise<ToolCallOutcome> {
  const started = performance.now();
  const finish = (content: string, ok: boolean): ToolCallOutcome => ({
    content,
    ok,
    ms: Math.round(performance.now() - started),
  });

  if (call.parseError) {
    return finish(
      toolError(
        `malformed tool call: ${call.parseError}`,
        'emit <tool_call>{"name": "<tool>", "arguments": {...}}</tool_call> with valid JSON',
      ),
      false,
    );
  }
  const tool = tools.find((candidate) => candidate.name === call.name);
  if (!tool) {
    const names = tools.map((candidate) => candidate.name).join(', ') || '(none)';
    return finish(toolError(`unknown tool '${call.name}'`, `available tools: ${names}`), false);
  }
  let args: unknown;
  try {
    args = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
  } catch (error) {
    return finish(
      toolError(
        `arguments for '${call.name}' are not valid JSON: ${errorMessage(error)}`,
        'send the arguments as one JSON object',
      ),
      false,
    );
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    return finish(toolError(`arguments for '${call.name}' must be a JSON object`), false);
  }
  if (isZodTool(tool)) {
    const parsed = tool.parameters.safeParse(args);
    if (!parsed.success) {
      const fields = parsed.error.issues
        .map((issue) => `${issue.path.join('.') || '(arguments)'}: ${issue.message}`)
        .join('; ');
      return finish(
        toolError(`invalid arguments for '${call.name}': ${fields}`, 'fix the named fields and call again'),
        false,
      );
    }
    args = parsed.data;
  }
  try {
    if (tool.toolset === FILE_TOOLSET && !tool.confinesOwnPaths)
      await confinePaths(args as Record<string, unknown>, context.sandbox);
    const output = await tool.run(args as Record<string, unknown>, context);
    return finish(renderOutput(output), true);
  } catch (error) {
    if (context.signal.aborted) return finish(toolError('[interrupted]'), false);
    if (error instanceof ToolFailure) return finish(toolError(error.message, error.hint), false);
    return finish(toolError(`${call.name} failed: ${errorMessage(error)}`), false);
  }
}
