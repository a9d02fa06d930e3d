import type { z } from 'zod';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { CallToolFunction, DelegateFunction } from './nested.js';
import type { ToolServices } from './services.js';

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

/** Loads the tools of a toolset declared before its code is needed (the built-ins, see builtin.ts). */
export type ToolsetLoader = () => Promise<readonly Tool[]>;
