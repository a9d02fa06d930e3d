import type { ChatRequest, ChatRequestMessage, ScriptedReply, ScriptFunction } from './script.js';
import { assistantTurns } from './conversation-script.js';

export interface EchoScriptOptions {
  /** Tool turns before the final answer, when a `terminal` tool is offered (default 1). */
  toolTurns?: number;
}

const QUOTE_LIMIT = 400;

/**
 * The default script for demos and throughput benchmarks: it works with any prompt and any
 * toolset. While fewer than `toolTurns` assistant turns happened and `terminal` is offered, it
 * runs `echo` with the prompt's words; then it answers with text quoting the tool output. With
 * no terminal tool (or on the grace call, which offers none) it answers at once.
 */
export function createEchoScript(options: EchoScriptOptions = {}): ScriptFunction {
  const toolTurns = options.toolTurns ?? 1;
  return (request) => {
    const prompt = promptWords(request);
    const last = request.messages[request.messages.length - 1];
    const offersTerminal = request.tools?.some((tool) => tool.function?.name === 'terminal') ?? false;
    if (offersTerminal && assistantTurns(request) < toolTurns) return runEcho(prompt, assistantTurns(request));
    if (last?.role === 'tool') return quoteToolOutput(request.messages);
    return {
      reasoning_content: `The user wrote "${prompt}". No tool is needed for a scripted answer.`,
      content: `You wrote: "${prompt}". (scripted answer from traj's mock server)`,
    };
  };
}

export const echoScript: ScriptFunction = createEchoScript();

function runEcho(prompt: string, turn: number): ScriptedReply {
  return {
    reasoning_content: `The user wrote "${prompt}". I will echo it with the terminal tool.`,
    tool_calls: [
      { name: 'terminal', arguments: { command: `echo '${turn > 0 ? `step ${turn + 1}: ` : ''}${prompt}'` } },
    ],
  };
}

/** The final answer quotes the results of the last tool turn. */
function quoteToolOutput(messages: ChatRequestMessage[]): ScriptedReply {
  const outputs: string[] = [];
  for (let index = messages.length - 1; index >= 0 && messages[index]!.role === 'tool'; index--) {
    outputs.unshift(toolOutputText(messages[index]!.content));
  }
  return {
    reasoning_content: 'The tool answered; I will report what it printed.',
    content: `The tool printed: ${outputs.join(' | ')}`,
  };
}

/** The words of the last user message, stripped to characters safe inside single quotes. */
function promptWords(request: ChatRequest): string {
  for (let index = request.messages.length - 1; index >= 0; index--) {
    const message = request.messages[index]!;
    if (message.role !== 'user') continue;
    const text = typeof message.content === 'string' ? message.content : JSON.stringify(message.content ?? '');
    const words = text
      .replace(/[^\w .,:/?!+=-]+/g, ' ')
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, 60);
    return words || 'hello';
  }
  return 'hello';
}

/** A terminal result is JSON with an `output` field; any other result is quoted as text. */
function toolOutputText(content: unknown): string {
  const text = typeof content === 'string' ? content : JSON.stringify(content ?? '');
  if (text.startsWith('{')) {
    try {
      const value = JSON.parse(text) as { output?: unknown; stdout?: unknown; error?: unknown };
      const picked = value.output ?? value.stdout ?? value.error;
      if (typeof picked === 'string') return picked.trim().slice(0, QUOTE_LIMIT);
    } catch {
      // Not JSON after all: quote it as text.
    }
  }
  return text.trim().slice(0, QUOTE_LIMIT);
}
