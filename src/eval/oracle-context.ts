import type { Sandbox } from '../sandbox/sandbox.js';

/** A tool result as the oracle sees it (the same text the model would have read). */
export interface OracleToolResult {
  content: string;
  ok: boolean;
}

/**
 * What an environment's `oracle` hook gets: the rollout's sandbox (already set up) and a way to
 * act through the real tools. Every `callTool` runs through the tool registry exactly as a
 * model's call would and is recorded in the trajectory as an assistant tool call plus its result.
 */
export interface OracleContext {
  readonly sandbox: Sandbox;
  readonly signal: AbortSignal;
  callTool(name: string, args: Record<string, unknown>): Promise<OracleToolResult>;
}
