import { ModelError, serializeError, type SerializedError } from '../errors.js';
import { describeFailure, isContextOverflow } from '../model/context-overflow.js';
import { addUsage, emptyUsage, type Message } from '../model/messages.js';
import type { CompletionTokens } from '../model/completion-tokens.js';
import type { ModelResponse } from '../model/types.js';
import { toolSpec } from '../tools/tool-spec.js';
import type { ToolCallInput } from '../tools/execute-tool-call.js';
import type { ToolServices } from '../tools/services.js';
import type { RunAgentOptions } from './agent-options.js';
import { ContextWindow } from './context-window.js';
import type { Compression } from './compression.js';
import type { AgentFinishReason, AgentResult } from './result.js';
import { defaultStopAfterResponse } from './stop-conditions.js';
import { childRunner, childUsage } from './subagent.js';
import { runToolStep } from './tool-step.js';

export const GRACE_PROMPT =
  'You have used all available turns. Reply now with your final answer; do not call any tools.';

/** Run one agent conversation to completion. Never throws: failures end up in the result. */
export async function runAgent(options: RunAgentOptions): Promise<AgentResult> {
  const run = new AgentRun(options);
  const stopWhen = options.stopWhen ?? defaultStopAfterResponse;
  try {
    for (;;) {
      if (run.signal.aborted) return run.finish('aborted');
      if (run.turns >= options.maxTurns) return await run.graceCall();
      const response = await run.callModel(true);
      if (!response) return run.finish('empty');
      const reason = stopWhen({ turns: run.turns, lastResponse: response, signal: run.signal });
      if (reason) return run.finish(reason);
      await run.runTools(response);
      options.onEvent?.({ type: 'turn_end', turn: run.turns });
      const after = options.stopAfterTools?.({ turns: run.turns, lastResponse: response, signal: run.signal });
      if (after) return run.finish(after);
    }
  } catch (error) {
    // An overflow that compression could not cure is the agent's outcome, not an infrastructure fault.
    const reason = run.signal.aborted ? 'aborted' : isContextOverflowError(error) ? 'context_length' : 'api_error';
    return run.finish(reason, serializeError(error));
  }
}

/** The mutable state of one run and the steps the loop above is made of. */
class AgentRun {
  readonly messages: Message[];
  readonly signal: AbortSignal;
  turns = 0;
  apiCalls = 0;
  private readonly result: Omit<AgentResult, 'messages' | 'finishReason' | 'turns' | 'apiCalls'> & {
    completions: CompletionTokens[];
  };
  private readonly started = performance.now();
  private readonly state: Map<string, unknown>;
  private readonly context: ContextWindow;
  /** The caller's tool services, with inner model calls' usage counted in this run's usage. */
  private readonly services: ToolServices | undefined;

  constructor(private readonly options: RunAgentOptions) {
    this.messages = [...options.messages];
    this.signal = options.signal ?? new AbortController().signal;
    this.state = options.state ?? new Map();
    this.context = new ContextWindow(options.context);
    this.result = {
      toolCalls: [],
      completions: [],
      usage: emptyUsage(),
      timings: { started_at: new Date().toISOString(), duration_ms: 0, model_ms: 0, tool_ms: 0 },
    };
    const usage = this.result.usage;
    this.services = options.services && {
      ...options.services,
      reportUsage: (more) => {
        addUsage(usage, more);
        options.services!.reportUsage?.(more);
      },
    };
  }

  /** One counted model call, retrying empty answers; undefined when every try was empty. */
  async callModel(withTools: boolean): Promise<ModelResponse | undefined> {
    const turn = ++this.turns;
    for (let attempt = 0; attempt <= (this.options.emptyRetries ?? 2); attempt++) {
      const response = await this.request(turn, withTools);
      // Only a normal stop can be empty: a cut-off or filtered reply is kept with its reason.
      const normal = response.finishReason === 'stop' || response.finishReason === 'tool_calls';
      const empty = normal && !response.message.content?.trim() && response.toolCalls.length === 0;
      if (!empty) {
        this.messages.push(response.message);
        this.keepTokens(response);
        return response;
      }
    }
    return undefined;
  }

  /** The turn's token ids and logprobs, beside its message (the record's `completions`). */
  private keepTokens(response: ModelResponse): void {
    const tokens = response.tokens;
    if (!tokens || (!tokens.tokenIds && !tokens.logprobs)) return;
    this.result.completions.push({
      message: this.messages.length - 1,
      finish_reason: response.finishReason,
      token_ids: tokens.tokenIds,
      logprobs: tokens.logprobs,
      top_logprobs: tokens.topLogprobs,
    });
  }

  private async request(turn: number, withTools: boolean): Promise<ModelResponse> {
    const { model, tools, onEvent, stream } = this.options;
    const specs = withTools && tools.length > 0 ? tools.map(toolSpec) : undefined;
    this.compressed(
      turn,
      await this.context.beforeCall(this.messages, this.apiCalls + 1, specs, this.state, this.signal),
    );
    for (;;) {
      onEvent?.({ type: 'model_start', turn });
      this.apiCalls++;
      const view = this.context.view(this.messages);
      try {
        const response = await model.complete({
          messages: view,
          tools: specs,
          signal: this.signal,
          onDelta: stream && onEvent ? (delta) => onEvent({ type: 'model_delta', turn, delta }) : undefined,
        });
        addUsage(this.result.usage, response.usage);
        this.context.observe(response.usage, view.length);
        this.result.timings.model_ms += response.durationMs;
        onEvent?.({ type: 'model_end', turn, response });
        return response;
      } catch (error) {
        // The server says it does not fit: compress and send again, once per compression won.
        if (!isContextOverflowError(error)) throw error;
        const compression = await this.context.afterOverflow(
          this.messages,
          this.apiCalls + 1,
          specs,
          this.state,
          this.signal,
        );
        if (!compression) throw error;
        this.compressed(turn, compression);
      }
    }
  }

  private compressed(turn: number, compression: Compression | undefined): void {
    if (compression) this.options.onEvent?.({ type: 'compression', turn, compression });
  }

  /** Turns are exhausted: one last call without tools asks for the final answer. */
  async graceCall(): Promise<AgentResult> {
    this.messages.push({ role: 'user', content: GRACE_PROMPT });
    this.turns--; // the grace call is an API call, not a turn
    await this.callModel(false);
    this.turns = this.options.maxTurns;
    return this.finish('max_turns');
  }

  /** Run the response's tool calls (one tool step) and append their results in call order. */
  async runTools(response: ModelResponse): Promise<void> {
    const { onEvent, tools, sandbox, env, budget, toolConcurrency } = this.options;
    const calls: ToolCallInput[] = response.toolCalls.map((call) => ({
      id: call.id,
      name: call.function.name,
      arguments: call.function.arguments,
      parseError: call.parseError,
    }));
    const turn = this.turns;
    const step = await runToolStep(calls, {
      tools,
      sandbox,
      signal: this.signal,
      state: this.state,
      env: env ?? process.env,
      budget,
      concurrency: toolConcurrency,
      services: this.services,
      delegate: childRunner(this.options, this.options.depth ?? 0, runAgent),
      onStart: (call) => onEvent?.({ type: 'tool_start', turn, call }),
      onEnd: (call, outcome) => onEvent?.({ type: 'tool_end', turn, call, outcome }),
      onInner: (call, inner) =>
        onEvent?.({ type: 'inner_call', turn, call, name: inner.name, ok: inner.ok, ms: inner.ms }),
    });
    this.messages.push(...step.messages);
    this.result.toolCalls.push(...step.records);
    childUsage(step.records, this.result.usage);
    this.result.timings.tool_ms += step.ms;
  }

  finish(finishReason: AgentFinishReason, error?: SerializedError): AgentResult {
    this.result.timings.duration_ms = Math.round(performance.now() - this.started);
    if (error === undefined && finishReason === 'api_error')
      error = serializeError(new ModelError('unknown model failure', { code: 'model_unknown' }));
    addUsage(this.result.usage, this.context.usage);
    return {
      messages: this.messages,
      finishReason,
      turns: this.turns,
      apiCalls: this.apiCalls,
      ...this.result,
      compressions: this.context.compressions,
      ...(error ? { error } : {}),
    };
  }
}

function isContextOverflowError(error: unknown): boolean {
  const failure = describeFailure(error);
  return failure !== undefined && isContextOverflow(failure);
}
