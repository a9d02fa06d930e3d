import { modelSummarizer, runAgent, SUMMARIZER_PROMPT } from '../../src/agent/index.js';
import { createModelClient } from '../../src/model/client.js';
import { createLocalSandbox } from '../../src/sandbox/index.js';
import { startScriptedServer, type ChatRequest, type Script } from '../../src/testing/index.js';
import { loadToolRegistry } from '../../src/tools/builtin.js';

export interface LongConversationOptions {
  turns: number;
  /** Window the scripted server enforces (an overflow 400 past it, worded as OpenAI does). */
  windowTokens: number;
  latencyMs: number;
}

const CHARS_PER_TOKEN = 4;

function requestTokens(request: ChatRequest): number {
  return Math.ceil(
    (JSON.stringify(request.messages).length + JSON.stringify(request.tools ?? []).length) / CHARS_PER_TOKEN,
  );
}

/**
 * A `turns`-turn terminal conversation (each output ~1.9 KB) against a server that enforces a
 * context window, three ways: an unlimited window without compression (the token cost of
 * carrying everything), the limited window without compression (where it overflows), and the
 * limited window with compression. Tokens are what the server counted; wall time is the run's.
 */
export async function longConversationBenchmark(options: LongConversationOptions): Promise<Record<string, unknown>> {
  return {
    turns: options.turns,
    window_tokens: options.windowTokens,
    unlimited_window_no_compression: await once(options, Number.MAX_SAFE_INTEGER, false),
    limited_window_no_compression: await once(options, options.windowTokens, false),
    limited_window_with_compression: await once(options, options.windowTokens, true),
  };
}

async function once(
  options: LongConversationOptions,
  window: number,
  compress: boolean,
): Promise<Record<string, unknown>> {
  let peak = 0;
  let promptTokens = 0;
  let summaries = 0;
  let answered = 0;
  const script: Script = (request) => {
    const tokens = requestTokens(request);
    if (request.messages[0]?.content === SUMMARIZER_PROMPT) {
      summaries++;
      promptTokens += tokens;
      return {
        content: 'Summary: the agent ran numbered listing commands; each printed a long list of numbers. '.repeat(6),
        usage: { prompt_tokens: tokens, completion_tokens: 130 },
      };
    }
    if (tokens > window) {
      return {
        fault: 'http',
        status: 400,
        body: {
          error: {
            message: `This model's maximum context length is ${window} tokens. However, your messages resulted in ${tokens} tokens.`,
            type: 'invalid_request_error',
            code: 'context_length_exceeded',
          },
        },
      };
    }
    peak = Math.max(peak, tokens);
    promptTokens += tokens;
    // Counted here, not from the request: after a compression the early steps are only in the summary.
    const done = answered++;
    const usage = { prompt_tokens: tokens, completion_tokens: 20 };
    if (done >= options.turns) return { content: `finished ${done} steps`, usage };
    return {
      tool_calls: [{ name: 'terminal', arguments: { command: `seq ${done * 1000} ${done * 1000 + 380}` } }],
      usage,
    };
  };
  const server = await startScriptedServer(script, { latencyMs: options.latencyMs, record: false });
  const sandbox = await createLocalSandbox({ kind: 'local' });
  try {
    const model = createModelClient({
      base_url: server.url,
      model: 'traj-scripted',
      api_key_env: 'NO_KEY',
      max_retries: 0,
    });
    const tools = (await loadToolRegistry()).select(['terminal'], { env: process.env });
    const started = performance.now();
    const result = await runAgent({
      model,
      tools,
      sandbox,
      maxTurns: options.turns + 1,
      messages: [
        { role: 'system', content: 'You are a benchmark agent.' },
        { role: 'user', content: `Run ${options.turns} listing commands, then report.` },
      ],
      context: {
        contextLength: Math.min(window, 10_000_000),
        ...(compress ? { summarize: modelSummarizer(model) } : {}),
      },
    });
    return {
      finish_reason: result.finishReason,
      turns: result.turns,
      api_calls: result.apiCalls,
      compressions: result.compressions?.length ?? 0,
      summariser_calls: summaries,
      server_prompt_tokens: promptTokens,
      peak_request_tokens: peak,
      wall_s: Math.round(performance.now() - started) / 1000,
    };
  } finally {
    await sandbox.dispose();
    await server.close();
  }
}
