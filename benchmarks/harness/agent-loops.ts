import { runAgent } from '../../src/agent/loop.js';
import { createModelClient } from '../../src/model/client.js';
import { createLocalSandbox } from '../../src/sandbox/index.js';
import { loadToolRegistry } from '../../src/tools/builtin.js';
import { startMockServer } from './processes.js';

export interface AgentLoopOptions {
  loops: number;
  toolTurns: number;
  latencyMs: number;
  rounds: number;
}

/**
 * N concurrent agent loops × T tool turns against the scripted server (its own process) with
 * latency L, in this process: achieved vs ideal rollouts/s and harness CPU per model call.
 */
export async function agentLoopBenchmark(
  options: AgentLoopOptions = { loops: 64, toolTurns: 3, latencyMs: 200, rounds: 4 },
): Promise<Record<string, number>> {
  const server = await startMockServer([
    '--latency-ms',
    String(options.latencyMs),
    '--tool-turns',
    String(options.toolTurns),
  ]);
  try {
    const model = createModelClient({
      base_url: server.url,
      model: 'traj-scripted',
      api_key_env: 'NO_KEY',
      concurrency: options.loops,
    });
    const tools = (await loadToolRegistry()).select(['terminal'], { env: process.env });
    const one = async (index: number) => {
      const sandbox = await createLocalSandbox({ kind: 'local' });
      try {
        const result = await runAgent({
          model,
          tools,
          sandbox,
          maxTurns: options.toolTurns + 2,
          messages: [
            { role: 'system', content: 'benchmark' },
            { role: 'user', content: `loop ${index}` },
          ],
        });
        if (result.finishReason !== 'stop') throw new Error(`loop ${index} finished with ${result.finishReason}`);
        return result.apiCalls;
      } finally {
        await sandbox.dispose();
      }
    };
    await Promise.all(Array.from({ length: Math.min(4, options.loops) }, (_, index) => one(index)));
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    let calls = 0;
    for (let round = 0; round < options.rounds; round++) {
      const counts = await Promise.all(
        Array.from({ length: options.loops }, (_, index) => one(round * options.loops + index)),
      );
      calls += counts.reduce((sum, count) => sum + count, 0);
    }
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const rollouts = options.loops * options.rounds;
    const callsPerRollout = options.toolTurns + 1;
    const idealSeconds = options.rounds * callsPerRollout * (options.latencyMs / 1000);
    return {
      loops: options.loops,
      tool_turns: options.toolTurns,
      latency_ms: options.latencyMs,
      rollouts,
      model_calls: calls,
      wall_s: round(seconds),
      achieved_rollouts_per_s: round(rollouts / seconds),
      ideal_rollouts_per_s: round(rollouts / idealSeconds),
      efficiency: round(idealSeconds / seconds),
      harness_cpu_ms_per_model_call: round((cpu.user + cpu.system) / 1000 / calls),
    };
  } finally {
    await server.stop();
  }
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
