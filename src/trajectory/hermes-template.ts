import type { ToolSpec } from '../model/messages.js';
import { pythonJson } from './python-json.js';

/** The JSON schema of one call, as the Hermes 2 Pro function-calling prompt states it. */
const FUNCTION_CALL_SCHEMA = {
  properties: {
    arguments: { title: 'Arguments', type: 'object' },
    name: { title: 'Name', type: 'string' },
  },
  required: ['arguments', 'name'],
  title: 'FunctionCall',
  type: 'object',
};

/**
 * The system turn of the ShareGPT view: the Hermes 2 Pro function-calling prompt with the offered
 * tools inside <tools></tools>, followed by the run's own system prompt so nothing the model was
 * told is lost. This is the single place the template lives; a test pins it.
 */
const memo = new Map<string, string>();
const MEMO_LIMIT = 256;

/** The last prompt built per tools array: a run's pool hands every record of a tool set the same array. */
const byArray = new WeakMap<readonly ToolSpec[], { system: string | undefined; prompt: string }>();

export function hermesSystemPrompt(tools: readonly ToolSpec[], runSystemPrompt: string | undefined): string {
  const last = byArray.get(tools);
  if (last && last.system === runSystemPrompt) return last.prompt;
  const prompt = memoizedPrompt(tools, runSystemPrompt);
  byArray.set(tools, { system: runSystemPrompt, prompt });
  return prompt;
}

function memoizedPrompt(tools: readonly ToolSpec[], runSystemPrompt: string | undefined): string {
  // Most rollouts of a run share their tools and system prompt: build each distinct prompt once.
  const key = `${JSON.stringify(tools)}\u0000${runSystemPrompt ?? ''}`;
  let prompt = memo.get(key);
  if (prompt === undefined) {
    prompt = renderHermesSystemPrompt(tools, runSystemPrompt);
    if (memo.size >= MEMO_LIMIT) memo.clear();
    memo.set(key, prompt);
  }
  return prompt;
}

function renderHermesSystemPrompt(tools: readonly ToolSpec[], runSystemPrompt: string | undefined): string {
  const signatures = tools.map((tool) => ({
    name: tool.function.name,
    description: tool.function.description,
    parameters: tool.function.parameters,
  }));
  const template =
    'You are a function calling AI model. You are provided with function signatures within <tools></tools> XML tags. ' +
    'You may call one or more functions to assist with the user query. ' +
    "Don't make assumptions about what values to plug into functions. " +
    'After calling and executing the functions, you will be provided with function results within <tool_response></tool_response> XML tags. ' +
    `Here are the available tools: <tools>${pythonJson(signatures)}</tools> ` +
    `Use the following pydantic model json schema for each tool call you will make: ${pythonJson(FUNCTION_CALL_SCHEMA)} ` +
    'For each function call return a json object with function name and arguments within <tool_call></tool_call> XML tags as follows:\n' +
    '<tool_call>\n{"name": <function-name>, "arguments": <args-dict>}\n</tool_call>';
  const own = runSystemPrompt?.trim();
  return own ? `${template}\n\n${own}` : template;
}
