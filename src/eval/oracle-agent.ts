import type { AgentResult } from '../agent/result.js';
import { ConfigError, serializeError } from '../errors.js';
import { emptyUsage, type AssistantMessage, type Message } from '../model/messages.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { runToolStep } from '../agent/tool-step.js';
import type { Budget } from '../tools/budget.js';
import type { Tool } from '../tools/tool.js';
import type { Environment } from './environment.js';
import type { OracleContext, OracleToolResult } from './oracle-context.js';

export interface OracleRunInput {
  environment: Environment;
  item: unknown;
  tools: Tool[];
  /** The starting conversation (system prompt and task), as the model would have seen it. */
  messages: Message[];
  sandbox: Sandbox;
  signal: AbortSignal;
  budget?: Budget;
  env?: NodeJS.ProcessEnv;
}

/**
 * The reference agent: the environment's `oracle` hook acts instead of a model, through the
 * real tools in the real sandbox. The result is an ordinary trajectory (one assistant message
 * per tool call, its tool result, then the hook's final answer) with no model calls. Validates
 * an environment: the oracle should earn full reward on every item.
 */
export async function runOracleAgent(input: OracleRunInput): Promise<AgentResult> {
  const { environment } = input;
  if (!environment.oracle) {
    throw new ConfigError(
      `environment '${environment.name}' has no oracle (reference solution); --agent oracle needs one`,
      { code: 'oracle_missing' },
    );
  }
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const messages = [...input.messages];
  const toolCalls: AgentResult['toolCalls'] = [];
  const state = new Map<string, unknown>();
  let toolMs = 0;
  const context: OracleContext = {
    sandbox: input.sandbox,
    signal: input.signal,
    async callTool(name, args): Promise<OracleToolResult> {
      const id = `oracle-${toolCalls.length + 1}`;
      const call = { id, name, arguments: JSON.stringify(args) };
      messages.push({
        role: 'assistant',
        content: null,
        tool_calls: [{ id, type: 'function', function: { name, arguments: call.arguments } }],
      });
      const step = await runToolStep([call], {
        tools: input.tools,
        sandbox: input.sandbox,
        signal: input.signal,
        state,
        env: input.env ?? process.env,
        budget: input.budget,
      });
      messages.push(...step.messages);
      toolCalls.push(...step.records);
      toolMs += step.ms;
      return { content: step.messages[0]!.content, ok: step.records[0]!.ok };
    },
  };
  const finish = (finishReason: AgentResult['finishReason'], error?: unknown): AgentResult => ({
    messages,
    finishReason,
    turns: messages.filter((message) => message.role === 'assistant').length,
    apiCalls: 0,
    toolCalls,
    usage: emptyUsage(),
    timings: {
      started_at: startedAt,
      duration_ms: Math.round(performance.now() - started),
      model_ms: 0,
      tool_ms: toolMs,
    },
    ...(error === undefined ? {} : { error: serializeError(error) }),
  });
  try {
    const answer = await environment.oracle(input.item, context);
    if (input.signal.aborted) return finish('aborted');
    const final: AssistantMessage = { role: 'assistant', content: answer };
    messages.push(final);
    return finish('stop');
  } catch (error) {
    if (input.signal.aborted) return finish('aborted');
    throw error;
  }
}
