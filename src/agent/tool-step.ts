import pLimit from 'p-limit';
import type { ToolMessage } from '../model/messages.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { applyBudget, DEFAULT_BUDGET, type Budget } from '../tools/budget.js';
import { executeToolCall, toolError, type ToolCallInput, type ToolCallOutcome } from '../tools/execute-tool-call.js';
import type { Tool } from '../tools/tool.js';
import type { DelegateFunction, NestedCallRecord, SubagentRecord } from '../tools/nested.js';
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
  /** Runs a child agent (delegate_task); absent where delegation is not offered. */
  delegate?: DelegateFunction;
  onStart?: (call: ToolCallInput) => void;
  onEnd?: (call: ToolCallInput, outcome: ToolCallOutcome) => void;
  /** A tool call an execute_code script made, as it ends. */
  onInner?: (call: ToolCallInput, inner: NestedCallRecord) => void;
}

/** The outcome of one call plus the nested work it did. */
interface RunOutcome extends ToolCallOutcome {
  subagents: SubagentRecord[];
  inner: NestedCallRecord[];
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
  const outcomes = await Promise.all(limited(calls, options.concurrency ?? 8, (call) => runTool(call, options)));
  const toolsetOf = (name: string) => options.tools.find((tool) => tool.name === name)?.toolset;
  const budgeted = await applyBudget(
    calls.map((call, index) => ({
      id: call.id,
      name: call.name,
      toolset: toolsetOf(call.name),
      content: outcomes[index]!.content,
    })),
    options.sandbox,
    options.budget ?? DEFAULT_BUDGET,
  );
  return {
    messages: calls.map((call, index) => ({
      role: 'tool',
      tool_call_id: call.id,
      name: call.name,
      content: budgeted[index]!.content,
    })),
    records: calls.map((call, index) => callRecord(call, outcomes[index]!)),
    ms: Math.round(performance.now() - started),
  };
}

function callRecord(call: ToolCallInput, outcome: RunOutcome): ToolCallRecord {
  const record: ToolCallRecord = { name: call.name, ok: outcome.ok, ms: outcome.ms };
  if (outcome.subagents.length === 0 && outcome.inner.length === 0) return record;
  return {
    ...record,
    id: call.id,
    ...(outcome.subagents.length > 0 ? { subagents: outcome.subagents } : {}),
    ...(outcome.inner.length > 0 ? { inner: outcome.inner } : {}),
  };
}

async function runTool(call: ToolCallInput, options: ToolStepOptions): Promise<RunOutcome> {
  const { signal } = options;
  options.onStart?.(call);
  const interrupted = abortedOutcome(signal);
  const nested = { inner: [] as NestedCallRecord[] };
  const children: Promise<SubagentRecord | undefined>[] = [];
  const context = {
    sandbox: options.sandbox,
    signal,
    state: options.state,
    callId: call.id,
    env: options.env,
    services: options.services,
    runTools: options.tools,
    delegate: options.delegate && nestedDelegate(options.delegate, call.id, children),
    callTool: async (name: string, args: Record<string, unknown>) => {
      const inner = { id: `${call.id}.${nested.inner.length + 1}`, name, arguments: JSON.stringify(args) };
      // The script's calls run with the script's context, minus delegation and further scripts.
      const outcome = await executeToolCall(options.tools, inner, {
        ...context,
        callId: inner.id,
        delegate: undefined,
      });
      const record = { name, arguments: inner.arguments, ok: outcome.ok, ms: outcome.ms, result: outcome.content };
      nested.inner.push(record);
      options.onInner?.(call, record);
      return outcome;
    },
  };
  const outcome = await Promise.race([executeToolCall(options.tools, call, context), interrupted.promise]);
  interrupted.cancel();
  options.onEnd?.(call, outcome);
  const subagents = (await Promise.all(children)).filter((child): child is SubagentRecord => child !== undefined);
  return { ...outcome, subagents, inner: nested.inner };
}

/** Children are recorded in the order the tool asked for them, not the order they finish in. */
function nestedDelegate(
  delegate: DelegateFunction,
  callId: string,
  into: Promise<SubagentRecord | undefined>[],
): DelegateFunction {
  return (request) => {
    const outcome = delegate(request);
    into.push(
      outcome.then(
        (result) => ({ call_id: callId, ...result.record }),
        () => undefined,
      ),
    );
    return outcome;
  };
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

/** Each call's run, at most `concurrency` at once; a step within the limit needs no limiter (most steps: one call). */
function limited<T>(calls: readonly ToolCallInput[], concurrency: number, run: (call: ToolCallInput) => Promise<T>) {
  if (calls.length <= concurrency) return calls.map(run);
  const limit = pLimit(concurrency);
  return calls.map((call) => limit(() => run(call)));
}
