import {
  scriptError,
  type ChatRequest,
  type ScriptContext,
  type ScriptedResponse,
  type ScriptFunction,
} from './script.js';

export type ConversationStep = ScriptedResponse | ScriptFunction;

/** The assistant messages already in a request: the conversation's 0-based turn. */
export function assistantTurns(request: ChatRequest): number {
  let turns = 0;
  for (const message of request.messages) if (message.role === 'assistant') turns++;
  return turns;
}

/**
 * Step N answers the request that already holds N assistant messages. The step comes from the
 * request itself, not from a counter, so many concurrent conversations (and worker threads)
 * can share one server. A retried request gets the same step again: script one-off faults with
 * a list or with `context.index` instead.
 */
export function conversationScript(steps: ConversationStep[]): ScriptFunction {
  return (request, context: ScriptContext) => {
    const step = steps[context.turn];
    if (step === undefined) {
      return scriptError(
        `the conversation script has ${steps.length} steps but the request already holds ${context.turn} assistant messages`,
      );
    }
    return typeof step === 'function' ? step(request, context) : step;
  };
}

/** A list answered round and round (for demos and benchmarks that run many conversations). */
export function cycleScript(responses: ScriptedResponse[]): ScriptFunction {
  if (responses.length === 0) throw new Error('cycleScript needs at least one response');
  return (_request, context) => responses[context.index % responses.length]!;
}
