import type { AssistantMessage, Message, ToolSpec } from '../model/messages.js';
import type { ChatTokenizer } from '../tokens/index.js';
import type { ChatRequest, ChatRequestMessage, ScriptedReply } from './script.js';

/**
 * The token fields vLLM adds to a chat completion, computed the way vLLM does with the model's
 * own tokenizer: the prompt is the chat template's rendering of the request with the generation
 * prompt; the "sampled" tokens are the template's text of the reply as the next assistant turn,
 * through its end-of-turn token (dropped when the reply was cut by length). A reply's own
 * `token_ids` replace them (an endpoint whose ids differ from re-tokenising its text).
 */
export interface VllmTokens {
  promptTokenIds: number[] | undefined;
  tokenIds: number[] | undefined;
  /** `choices[0].logprobs.content`, OpenAI's shape. */
  logprobs: Array<Record<string, unknown>> | undefined;
}

export function vllmTokens(tokenizer: ChatTokenizer, reply: ScriptedReply, request: ChatRequest): VllmTokens {
  const wantsIds = request.return_token_ids === true;
  const wantsLogprobs = request.logprobs === true;
  if (!wantsIds && !wantsLogprobs) return { promptTokenIds: undefined, tokenIds: undefined, logprobs: undefined };
  const messages = request.messages.map(fromWire);
  const tools = request.tools as ToolSpec[] | undefined;
  const prompt = tokenizer.render(messages, tools, { addGenerationPrompt: true });
  const ids = reply.token_ids ?? sampledIds(tokenizer, messages, tools, prompt, reply);
  const asIds = request.return_tokens_as_token_ids === true;
  const top = typeof request.top_logprobs === 'number' ? request.top_logprobs : 0;
  return {
    promptTokenIds: wantsIds ? tokenizer.encode(prompt) : undefined,
    tokenIds: wantsIds ? ids : undefined,
    logprobs: wantsLogprobs ? ids.map((id) => logprobEntry(tokenizer, id, top, asIds)) : undefined,
  };
}

function sampledIds(
  tokenizer: ChatTokenizer,
  messages: Message[],
  tools: ToolSpec[] | undefined,
  prompt: string,
  reply: ScriptedReply,
): number[] {
  const answer: AssistantMessage = { role: 'assistant', content: reply.content ?? null };
  const reasoning = reply.reasoning_content ?? reply.reasoning;
  if (reasoning !== undefined) answer.reasoning = reasoning;
  if (reply.tool_calls?.length)
    answer.tool_calls = reply.tool_calls.map((call, position) => ({
      id: call.id ?? `call_${position}`,
      type: 'function',
      function: {
        name: call.name,
        arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
      },
    }));
  const whole = tokenizer.render([...messages, answer], tools, { addGenerationPrompt: false });
  const end = whole.indexOf(tokenizer.eosToken, prompt.length);
  const ids = tokenizer.encode(whole.slice(prompt.length, end + tokenizer.eosToken.length));
  return reply.finish_reason === 'length' ? ids.slice(0, -1) : ids;
}

/** A fixed, id-dependent logprob, so a test can tell each position's value from its token. */
export function scriptedLogprob(id: number): number {
  return -((id % 97) + 1) / 100;
}

function logprobEntry(tokenizer: ChatTokenizer, id: number, top: number, asIds: boolean): Record<string, unknown> {
  const token = (tokenId: number) => (asIds ? `token_id:${tokenId}` : tokenizer.decode([tokenId]));
  const entry = (tokenId: number, logprob: number) => ({
    token: token(tokenId),
    logprob,
    bytes: [...Buffer.from(tokenizer.decode([tokenId]), 'utf8')],
  });
  const tops = Array.from({ length: top }, (_, rank) =>
    rank === 0 ? entry(id, scriptedLogprob(id)) : entry(id + rank, scriptedLogprob(id) - rank),
  );
  return { ...entry(id, scriptedLogprob(id)), top_logprobs: tops };
}

/** A request message back in traj's form (reasoning_content as `reasoning`). */
function fromWire(message: ChatRequestMessage): Message {
  const content = typeof message.content === 'string' || message.content === null ? message.content : '';
  switch (message.role) {
    case 'assistant': {
      const out: AssistantMessage = { role: 'assistant', content: content ?? null };
      if (typeof message.reasoning_content === 'string') out.reasoning = message.reasoning_content;
      if (message.tool_calls?.length)
        out.tool_calls = message.tool_calls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.function.name, arguments: call.function.arguments },
        }));
      return out;
    }
    case 'tool':
      return { role: 'tool', tool_call_id: message.tool_call_id ?? '', content: content ?? '' };
    case 'system':
      return { role: 'system', content: content ?? '' };
    default:
      return {
        role: 'user',
        content: (Array.isArray(message.content) ? message.content : (content ?? '')) as Message['content'] & string,
      };
  }
}
