import { runAgent } from '../../src/agent/loop.js';
import { createModelClient } from '../../src/model/client.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { callTool, delayed, reply, startScriptedServer, type ScriptFunction } from '../../src/testing/index.js';
import { loadToolRegistry } from '../../src/tools/builtin.js';

export interface ExecuteCodeBenchOptions {
  calls: number;
  latencyMs: number;
  repeats: number;
  backends: Array<'local' | 'docker'>;
}

const SCRIPT = (calls: number) =>
  `from hermes_tools import terminal\nfor i in range(${calls}):\n    terminal(f"echo step {i} > /dev/null; echo {i}")\nprint("done")\n`;

/** Turn 0 calls execute_code once (or terminal, once per turn), each model reply after `latencyMs`. */
function script(mode: 'script' | 'turns', calls: number, latencyMs: number): ScriptFunction {
  return (request) => {
    const turn = request.messages.filter((message) => message.role === 'assistant').length;
    if (mode === 'script')
      return delayed(latencyMs, turn === 0 ? callTool('execute_code', { code: SCRIPT(calls) }) : reply('done'));
    return delayed(
      latencyMs,
      turn < calls ? callTool('terminal', { command: `echo step ${turn} > /dev/null; echo ${turn}` }) : reply('done'),
    );
  };
}

/**
 * The same 20 terminal calls made by one execute_code script (2 model calls) and by 20 model
 * turns (21 model calls), against a scripted server with the batch benchmarks' latency: wall
 * time and harness CPU per rollout, per sandbox backend.
 */
export async function executeCodeBenchmark(options: ExecuteCodeBenchOptions): Promise<Record<string, number | string>> {
  const figures: Record<string, number | string> = {
    calls: options.calls,
    latency_ms: options.latencyMs,
    repeats: options.repeats,
  };
  const tools = (await loadToolRegistry()).select(['terminal', 'code_execution'], { env: process.env });
  for (const backend of options.backends) {
    for (const mode of ['script', 'turns'] as const) {
      const server = await startScriptedServer(script(mode, options.calls, options.latencyMs));
      const model = createModelClient({
        base_url: server.url,
        model: 'scripted',
        api_key_env: 'NO_KEY',
        max_retries: 0,
      });
      let sandbox: Sandbox | undefined;
      try {
        sandbox = await createSandbox({ kind: backend, run: 'bench-execute-code', key: mode });
        let wall = 0;
        let cpu = 0;
        for (let repeat = 0; repeat < options.repeats; repeat++) {
          const cpuBefore = process.cpuUsage();
          const started = performance.now();
          const result = await runAgent({
            model,
            tools,
            sandbox,
            maxTurns: options.calls + 2,
            messages: [
              { role: 'system', content: 'bench' },
              { role: 'user', content: 'go' },
            ],
          });
          if (result.finishReason !== 'stop')
            throw new Error(`${backend}/${mode} finished with ${result.finishReason}`);
          wall += performance.now() - started;
          const used = process.cpuUsage(cpuBefore);
          cpu += (used.user + used.system) / 1000;
        }
        figures[`${backend}_${mode}_wall_ms`] = Math.round(wall / options.repeats);
        figures[`${backend}_${mode}_harness_cpu_ms`] = Math.round(cpu / options.repeats);
      } finally {
        await sandbox?.dispose();
        await server.close();
      }
    }
    figures[`${backend}_speedup`] = Number(
      (Number(figures[`${backend}_turns_wall_ms`]) / Number(figures[`${backend}_script_wall_ms`])).toFixed(2),
    );
  }
  return figures;
}
