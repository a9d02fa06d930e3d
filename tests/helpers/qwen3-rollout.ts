import type { AgentResult } from '../../src/agent/index.js';
import { runAgent } from '../../src/agent/index.js';
import type { EndpointInput } from '../../src/config/endpoint.js';
import { createModelClient } from '../../src/model/index.js';
import type { Message, ToolSpec } from '../../src/model/messages.js';
import { createLocalSandbox } from '../../src/sandbox/index.js';
import { loadToolRegistry } from '../../src/tools/builtin.js';
import { toolSpec } from '../../src/tools/tool-spec.js';
import { startScriptedServer, type RecordedRequest, type Script } from '../../src/testing/index.js';
import type { ChatTokenizer } from '../../src/tokens/index.js';

/** What a trainer asks vLLM for; Qwen3 keeps a turn's thinking in the rendering only when it is passed back. */
export const VLLM_ENDPOINT: Partial<EndpointInput> = {
  logprobs: true,
  top_logprobs: 2,
  token_ids: 'vllm',
  reasoning_echo: 'always',
};

export const QWEN3_PROMPT: Message[] = [
  { role: 'system', content: 'You are a test agent.' },
  { role: 'user', content: 'Run echo hi and tell me what it printed.' },
];

/** One terminal rollout against the scripted endpoint answering in vLLM's token format with Qwen3's tokenizer. */
export async function qwen3Rollout(
  t: { after(fn: () => unknown): void },
  tokenizer: ChatTokenizer,
  script: Script,
  stream = false,
): Promise<{ result: AgentResult; specs: ToolSpec[]; requests: RecordedRequest[] }> {
  const server = await startScriptedServer(script, { tokenizer });
  const sandbox = await createLocalSandbox({ kind: 'local' });
  t.after(async () => {
    await sandbox.dispose();
    await server.close();
  });
  const model = createModelClient({
    base_url: server.url,
    model: 'qwen3',
    api_key_env: 'NO_KEY',
    max_retries: 0,
    ...VLLM_ENDPOINT,
  });
  const tools = (await loadToolRegistry({ terminal: { persistent: true } })).select(['terminal'], { env: process.env });
  const result = await runAgent({
    model,
    tools,
    messages: QWEN3_PROMPT,
    sandbox,
    maxTurns: 4,
    stream,
    onEvent: stream ? () => {} : undefined,
  });
  return { result, specs: tools.map(toolSpec), requests: server.requests };
}
