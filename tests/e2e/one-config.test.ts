import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { SUMMARIZER_PROMPT } from '../../src/agent/summarizer.js';
import { callTool, reply, startScriptedServer, type ChatRequest } from '../../src/testing/index.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';
import { startWebStandIn } from '../helpers/web-stand-in.js';

/**
 * Issue #36's promise: every command builds the agent from the same merged configuration. A
 * TRAJ_HOME/config.yaml holds all six tool sections; a run config overrides some of them and sets
 * compression. Each command must show, at the wire, that it used the merged values: the local page
 * came through (web.allow_private from home), each terminal call had a fresh shell (terminal.persistent
 * false from the run config over home's true), and the conversation was compressed (the run config's
 * compression over a small window).
 */
interface Observed {
  page: boolean;
  mark: string | undefined;
  summaries: number;
}

function lastCall(request: ChatRequest): { name: string; arguments: string } | undefined {
  const assistant = request.messages.findLast((message) => message.role === 'assistant');
  return assistant?.tool_calls?.at(-1)?.function;
}

function toolText(request: ChatRequest): string {
  const content = request.messages.at(-1)?.role === 'tool' ? request.messages.at(-1)?.content : '';
  return typeof content === 'string' ? content : JSON.stringify(content ?? '');
}

async function startAgent(pageUrl: string) {
  let observed: Observed = { page: false, mark: undefined, summaries: 0 };
  const server = await startScriptedServer((request: ChatRequest) => {
    // Usage as a real server reports it: the context window counts tokens from it.
    const usage = { prompt_tokens: Math.ceil(JSON.stringify(request.messages).length / 3), completion_tokens: 10 };
    const system = request.messages[0]?.content;
    if (typeof system === 'string' && system.startsWith(SUMMARIZER_PROMPT.slice(0, 40))) {
      observed.summaries++;
      return reply('Summary: the page was read and a variable was exported.', { usage });
    }
    const call = lastCall(request);
    if (!call) return callTool('web_extract', { urls: [pageUrl] }, { usage });
    if (call.name === 'web_extract') {
      observed.page ||= /highest tides in the world/.test(toolText(request));
      return callTool('terminal', { command: 'export TRAJ_MARK=set' }, { usage });
    }
    if (call.arguments.includes('export'))
      return callTool('terminal', { command: 'echo "mark=${TRAJ_MARK:-unset}"' }, { usage });
    observed.mark ??= /mark=(\w+)/.exec(toolText(request))?.[1];
    return reply('Done.\n#### 42', { usage });
  });
  return {
    server,
    take(): Observed {
      const taken = observed;
      observed = { page: false, mark: undefined, summaries: 0 };
      return taken;
    },
  };
}

function writeConfigs(directory: string): { home: string; runConfig: string; dataset: string } {
  const home = join(directory, 'home');
  mkdirSync(home);
  writeFileSync(
    join(home, 'config.yaml'),
    stringify({
      web: { allow_private: true, extract: { max_chars: 4_000 } },
      auxiliary: { vision: { model: 'agent' } },
      browser: { navigation_timeout_ms: 9_000 },
      delegation: { max_turns: 3 },
      code_execution: { max_tool_calls: 5 },
      terminal: { persistent: true },
    }),
  );
  const runConfig = join(directory, 'run.yaml');
  writeFileSync(
    runConfig,
    stringify({
      max_turns: 6,
      endpoint: { context_length: 2_000 },
      terminal: { persistent: false },
      browser: { action_timeout_ms: 2_000 },
      compression: { threshold: 0.2, keep_last_turns: 1 },
    }),
  );
  const dataset = join(directory, 'gsm.jsonl');
  writeFileSync(
    dataset,
    `${JSON.stringify({ prompt: 'Read the page, then answer 6 times 7.', question: 'Read the page, then answer 6 times 7.', answer: '#### 42', final: '42' })}\n`,
  );
  return { home, runConfig, dataset };
}

test('batch, eval, bench, ask and chat all use the merged TRAJ_HOME and run config', async (t) => {
  const directory = temporaryDirectory(t);
  const site = await startWebStandIn();
  t.after(() => site.close());
  const agent = await startAgent(`${site.url}/article`);
  t.after(() => agent.server.close());
  const { home, runConfig, dataset } = writeConfigs(directory);
  const endpoint = ['--base-url', agent.server.url, '--model', 'agent', '--api-key-env', 'NO_KEY'];
  const common = ['--config', runConfig, '--toolsets', 'web,terminal', ...endpoint];
  const commands: Record<string, { args: string[]; stdin?: string }> = {
    batch: { args: ['batch', '--run', 'one-batch', '--dataset', dataset, ...common] },
    eval: { args: ['eval', '--env', 'gsm8k', '--run', 'one-eval', '--dataset', dataset, ...common] },
    bench: { args: ['bench', 'gsm8k', '--run', 'one-bench', '--dataset', dataset, ...common] },
    ask: { args: ['ask', 'Read the page, then answer.', '--scratch', ...common] },
    chat: { args: ['chat', '--plain', ...common], stdin: 'Read the page, then answer.\n' },
  };
  for (const [name, { args, stdin }] of Object.entries(commands)) {
    const result = await runCli(args, { cwd: directory, env: { TRAJ_HOME: home }, stdin });
    assert.equal(result.code, 0, `${name}: ${result.stdout}\n${result.stderr}`);
    const observed = agent.take();
    assert.equal(observed.page, true, `${name}: web.allow_private from TRAJ_HOME let the local page through`);
    assert.equal(
      observed.mark,
      'unset',
      `${name}: terminal.persistent false (run config over home) gave a fresh shell`,
    );
    assert.ok(observed.summaries > 0, `${name}: the run config's compression compressed the conversation`);
  }
});
