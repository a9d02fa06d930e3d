import { randomBytes } from 'node:crypto';
import type { AgentResult, ToolCallRecord } from '../agent/result.js';
import { RunError, serializeError } from '../errors.js';
import { contentText, type Message, type ToolSpec } from '../model/messages.js';
import type { ModelClient } from '../model/types.js';
import type { ExecResult, Sandbox } from '../sandbox/sandbox.js';
import type { ArtifactSink } from '../tools/services.js';
import { fillPlaceholders, type AgentDefinition, type AgentPlaceholders } from './agent-definition.js';
import { AGENT_HOME } from './agent-image.js';
import { startRecordingProxy, type ProxyLimits, type RecordingProxy } from './recording-proxy.js';

/** Where the launcher keeps the agent's environment and instruction inside the container. */
const LAUNCH_DIR = '/tmp/traj-agent';

export interface AgentCliRun {
  definition: AgentDefinition;
  client: ModelClient;
  sandbox: Sandbox;
  /** The host address the container reaches (its network's gateway). */
  host: string;
  /** The task: the user messages become the instruction (the agent brings its own system prompt). */
  messages: Message[];
  /** Turns default to the run's --max-turns when the definition sets none. */
  maxTurns?: number;
  signal: AbortSignal;
  artifacts?: ArtifactSink;
}

export interface AgentCliResult {
  result: AgentResult;
  /** The tools the agent offered its model (its last call's). */
  tools: ToolSpec[];
}

/** Start the proxy, run the agent's CLI in the sandbox on the instruction, and build the record from the proxy's log. */
export async function runAgentCli(run: AgentCliRun): Promise<AgentCliResult> {
  const started = Date.now();
  const stopped = new AbortController();
  const proxy = await startRecordingProxy({
    client: run.client,
    host: run.host,
    token: randomBytes(24).toString('hex'),
    limits: proxyLimits(run),
    onStop: (stop) => stopped.abort(stop),
  });
  try {
    const values = placeholders(run, proxy);
    await writeLaunchFiles(run, values);
    const exec = await run.sandbox.exec(launchCommand(run), {
      timeoutMs: run.definition.timeout * 1000,
      signal: AbortSignal.any([run.signal, stopped.signal]),
    });
    await keepLogs(run, exec);
    return { result: agentResult(run, proxy, exec, started), tools: proxy.exchanges.at(-1)?.tools ?? [] };
  } finally {
    await proxy.close();
  }
}

function proxyLimits(run: AgentCliRun): ProxyLimits {
  const { limits } = run.definition;
  return {
    ...((limits.turns ?? run.maxTurns) ? { turns: limits.turns ?? run.maxTurns } : {}),
    ...(limits.tokens ? { tokens: limits.tokens } : {}),
    ...(limits.cost_usd ? { costUsd: limits.cost_usd } : {}),
  };
}

function placeholders(run: AgentCliRun, proxy: RecordingProxy): AgentPlaceholders {
  const token = proxy.url.slice(proxy.url.lastIndexOf('/') + 1);
  return {
    base_url: `${proxy.url}/v1`,
    proxy_url: proxy.url,
    token,
    model: run.client.model,
    workdir: run.sandbox.workdir,
  };
}

function instructionOf(messages: Message[]): string {
  return messages
    .filter((message) => message.role === 'user')
    .map((message) => contentText(message.content))
    .join('\n\n');
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * The agent's files, its environment and the instruction, written as files: the sandbox strips
 * credential-like names (OPENAI_API_KEY) from exec environments, and the agent's "key" is only
 * the proxy's per-rollout token, never the endpoint's key.
 */
async function writeLaunchFiles(run: AgentCliRun, values: AgentPlaceholders): Promise<void> {
  const env = { TRAJ_AGENT_HOME: AGENT_HOME, ...run.definition.env };
  const exports = Object.entries(env).map(([name, value]) => `${name}=${shellQuote(fillPlaceholders(value, values))}`);
  const files: Record<string, string> = {
    [`${LAUNCH_DIR}/env.sh`]: `${exports.join('\n')}\n`,
    [`${LAUNCH_DIR}/instruction.md`]: instructionOf(run.messages),
  };
  for (const [path, text] of Object.entries(run.definition.files)) files[path] = fillPlaceholders(text, values);
  for (const [path, text] of Object.entries(files)) {
    const written = await run.sandbox.exec(`mkdir -p "$(dirname ${shellQuote(path)})" && cat > ${shellQuote(path)}`, {
      stdin: text,
      signal: run.signal,
    });
    if (written.exitCode !== 0)
      throw new RunError(`cannot write ${path} for agent ${run.definition.name}: ${written.stderr.trim()}`, {
        code: 'agent_failed',
        retryable: true,
      });
  }
}

function launchCommand(run: AgentCliRun): string {
  return [
    `set -a; . ${LAUNCH_DIR}/env.sh; set +a`,
    `export TRAJ_INSTRUCTION="$(cat ${LAUNCH_DIR}/instruction.md)"`,
    `cd ${shellQuote(run.sandbox.workdir)}`,
    run.definition.command,
  ].join('\n');
}

/** The agent's output and its own log files, kept as artifacts of the rollout. */
async function keepLogs(run: AgentCliRun, exec: ExecResult): Promise<void> {
  const { artifacts, definition } = run;
  if (!artifacts) return;
  await artifacts.save(`${definition.name}-stdout.txt`, Buffer.from(exec.stdout));
  await artifacts.save(`${definition.name}-stderr.txt`, Buffer.from(exec.stderr));
  if (definition.logs.length === 0) return;
  const paths = definition.logs.map((path) => shellQuote(path.replace(/^\/+/, ''))).join(' ');
  const archive = await run.sandbox.exec(`tar -cz -C / --ignore-failed-read ${paths} 2>/dev/null | base64 -w0`, {
    timeoutMs: 120_000,
  });
  if (archive.stdout) await artifacts.save(`${definition.name}-logs.tar.gz`, Buffer.from(archive.stdout, 'base64'));
}

function agentResult(run: AgentCliRun, proxy: RecordingProxy, exec: ExecResult, started: number): AgentResult {
  const last = proxy.exchanges.at(-1);
  const messages = last ? [...last.messages, last.response.message] : run.messages;
  const base = {
    messages,
    turns: proxy.exchanges.length,
    apiCalls: proxy.exchanges.length,
    toolCalls: toolCallRecords(messages),
    usage: proxy.usage,
    timings: {
      started_at: new Date(started).toISOString(),
      duration_ms: Date.now() - started,
      model_ms: proxy.exchanges.reduce((sum, exchange) => sum + exchange.response.durationMs, 0),
      tool_ms: 0,
    },
  };
  const stop = proxy.stop;
  if (stop) {
    const error = stop.error ?? serializeError(new RunError(stop.message, { code: 'agent_limit' }));
    return { ...base, finishReason: stop.reason, error };
  }
  if (exec.timedOut || exec.aborted) return { ...base, finishReason: 'aborted', error: timeoutError(run, exec) };
  if (exec.exitCode !== 0) return { ...base, finishReason: 'agent_error', error: exitError(run, exec) };
  return { ...base, finishReason: last?.response.finishReason === 'length' ? 'length' : 'stop' };
}

function timeoutError(run: AgentCliRun, exec: ExecResult) {
  const message = exec.timedOut
    ? `agent ${run.definition.name} ran out of its time limit (${run.definition.timeout} s) and was stopped; its work was scored as it stood`
    : `agent ${run.definition.name} was stopped`;
  return serializeError(new RunError(message, { code: exec.timedOut ? 'agent_timeout' : 'aborted' }));
}

function exitError(run: AgentCliRun, exec: ExecResult) {
  const tail = exec.stderr.trim().split('\n').slice(-5).join('\n');
  return serializeError(
    new RunError(`agent ${run.definition.name} exited with code ${exec.exitCode}: ${tail}`, { code: 'agent_failed' }),
  );
}

/** The calls as the agent made them; one answered by a tool message counts as done (the agent ran it, not traj). */
function toolCallRecords(messages: Message[]): ToolCallRecord[] {
  const answered = new Set(messages.flatMap((message) => (message.role === 'tool' ? [message.tool_call_id] : [])));
  return messages.flatMap((message) =>
    message.role === 'assistant'
      ? (message.tool_calls ?? []).map((call) => ({
          name: call.function.name,
          ok: answered.has(call.id),
          ms: 0,
          id: call.id,
        }))
      : [],
  );
}
