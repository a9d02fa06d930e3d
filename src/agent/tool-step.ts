import pLimit from 'p-limit';
import type { ToolMessage } from '../model/messages.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { applyBudget, DEFAULT_BUDGET, type Budget } from '../tools/budget.js';
import { executeToolCall, toolError, type Tool, type ToolCallInput, type ToolCallOutcome } from '../tools/registry.js';
import type { ToolServices } from '../tools/services.js';
import type { ToolCallRecord } from './result.js';

export interface ToolStepOptions {
  tools: Tool[];
  sandbox: Sandbox;
  signal: AbortSignal;
  /** Per-run tool state (the todo list). */
  state: Map<string, unknown>;
  env: NodeJS.ProcessEnv;
  budget?: Budget;
  /** Calls of one step run concurrently, at most this many at once. */
  concurrency?: number;
  /** Settings, auxiliary models and the web cache for tools that reach outside services. */
  services?: ToolServices;
  onStart?: (call: ToolCallInput) => void;
  onEnd?: (call: ToolCallInput, outcome: ToolCallOutcome) => void;
}

export interface ToolStep {
  /** One tool message per call, in call order, each within the result budget. */
  messages: ToolMessage[];
  records: ToolCallRecord[];
  /** Wall time of the whole step. */
  ms: number;
}

/**
 * One assistant turn's tool calls: run concurrently, budgeted together, answered in call order.
 * The agent loop and the oracle agent both take their tool steps here, so a reference
 * trajectory is built exactly as a model's would be.
 */
export async function runToolStep(calls: readonly ToolCallInput[], options: ToolStepOptions): Promise<ToolStep> {
  const started = performance.now();
  const limit = pLimit(options.concurrency ?? 8);
  const outcomes = await Promise.all(calls.map((call) => limit(() => runTool(call, options))));
  const toolsetOf = (name: string) => options.tools.find((tool) => tool.name === name)?.toolset;
  const budgeted = await applyBudget(
    calls.map((call, index) => ({ id: call.id, name: call.name, toolset: toolsetOf(call.name), content: outcomes[index]!.content })),
    options.sandbox,
    options.budget ?? DEFAULT_BUDGET,
  );
  return {
    messages: calls.map((call, index) => ({ role: 'tool', tool_call_id: call.id, name: call.name, content: budgeted[index]!.content })),
    records: calls.map((call, index) => ({ name: call.name, ok: outcomes[index]!.ok, ms: outcomes[index]!.ms })),
    ms: Math.round(performance.now() - started),
  };
}

async function runTool(call: ToolCallInput, options: ToolStepOptions): Promise<ToolCallOutcome> {
  const { signal } = options;
  options.onStart?.(call);
  const interrupted = abortedOutcome(signal);
  const context = { sandbox: options.sandbox, signal, state: options.state, callId: call.id, env: options.env, services: options.services };
  const outcome = await Promise.race([executeToolCall(options.tools, call, context), interrupted.promise]);
  interrupted.cancel();
  options.onEnd?.(call, outcome);
  return outcome;
}

/** Resolves with an "[interrupted]" result when the signal aborts, so a stuck tool cannot hold the step. */
function abortedOutcome(signal: AbortSignal): { promise: Promise<ToolCallOutcome>; cancel: () => void } {
  let onAbort = () => {};
  const promise = new Promise<ToolCallOutcome>((resolve) => {
    onAbort = () => resolve({ content: toolError('[interrupted]'), ok: false, ms: 0 });
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  return { promise, cancel: () => signal.removeEventListener('abort', onAbort) };
}
