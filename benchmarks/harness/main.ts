import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { projectRoot } from '../../src/util/paths.js';
import { agentLoopBenchmark } from './agent-loops.js';
import { batchThroughputBenchmark } from './batch-throughput.js';
import { resumeBenchmark } from './resume.js';
import { ratio, sandboxOverheadBenchmark } from './sandbox-overhead.js';

type Figures = Record<string, unknown>;

interface Scenario {
  name: string;
  description: string;
  run(quick: boolean): Promise<Figures>;
}

/** Each scenario states its target; the figures are printed and saved to benchmarks/results/. */
const SCENARIOS: Scenario[] = [
  {
    name: 'agent-loops',
    description: 'N concurrent agent loops × T tool turns, scripted server with latency L (in process)',
    run: (quick) =>
      agentLoopBenchmark(
        quick
          ? { loops: 16, toolTurns: 3, latencyMs: 100, rounds: 2 }
          : { loops: 64, toolTurns: 3, latencyMs: 200, rounds: 4 },
      ),
  },
  {
    name: 'long-conversation',
    description:
      'a 60-turn terminal conversation, server window 24k tokens: tokens and wall time with and without compression',
    run: async (quick) =>
      (await import('./long-conversation.js')).longConversationBenchmark({
        turns: quick ? 30 : 60,
        windowTokens: 24_000,
        latencyMs: 20,
      }) as Promise<Figures>,
  },
  {
    name: 'batch-1000x3',
    description:
      "traj batch: 1,000 prompts × 3 tool turns, 500 ms latency, 64 in flight, under bubblewrap then unsandboxed, 5 alternating pairs, the medians of the pairs' ratios (targets: within 15% of unsandboxed in wall time and in machine CPU per rollout)",
    run: async (quick) => {
      const options = {
        prompts: quick ? 200 : 1000,
        toolTurns: 3,
        latencyMs: 500,
        concurrency: 64,
        toolsets: 'terminal',
      };
      // Five pairs, not three: one pair's ratio moves by up to 0.2 with the machine's minute.
      return sandboxOverheadBenchmark(options, quick ? 1 : 5);
    },
  },
  {
    name: 'execute-code',
    description:
      'one execute_code script making 20 terminal calls vs 20 model turns making them, 500 ms latency, local and docker sandbox',
    run: async (quick) =>
      (await import('./execute-code.js')).executeCodeBenchmark({
        calls: 20,
        latencyMs: 500,
        repeats: quick ? 1 : 3,
        backends: quick ? ['local'] : ['local', 'docker'],
      }),
  },
  {
    name: 'batch-500x1',
    description: 'traj batch: 500 single-turn prompts, 32 in flight, 50 ms latency (targets ≤ 1.5 s wall, ≤ 1.5 s CPU)',
    run: () =>
      batchThroughputBenchmark({
        name: 'batch-500x1',
        prompts: 500,
        toolTurns: 0,
        latencyMs: 50,
        concurrency: 32,
        toolsets: 'file',
      }),
  },
  {
    name: 'terminal-unused',
    description:
      "promptfoo's workload (500 single-turn prompts, no tool called, 32 in flight, 50 ms latency) with --toolsets terminal vs file under bubblewrap, 3 runs each, medians (goal: terminal within 10% of file in wall and machine CPU)",
    run: async (quick) => {
      const options = { prompts: 500, toolTurns: 0, latencyMs: 50, concurrency: 32, isolation: 'bwrap' as const };
      const runs = quick ? 1 : 3;
      const file = await batchThroughputBenchmark({ ...options, name: 'unused-file', toolsets: 'file', runs });
      const terminal = await batchThroughputBenchmark({
        ...options,
        name: 'unused-terminal',
        toolsets: 'terminal',
        runs,
      });
      return {
        file_wall_s: file.wall_s,
        terminal_wall_s: terminal.wall_s,
        file_machine_cpu_s: file.machine_cpu_s,
        terminal_machine_cpu_s: terminal.machine_cpu_s,
        file_children_cpu_s: file.children_cpu_s,
        terminal_children_cpu_s: terminal.children_cpu_s,
        terminal_over_file_wall: ratio(terminal.wall_s, file.wall_s),
        terminal_over_file_machine_cpu: ratio(
          terminal.machine_cpu_ms_per_rollout_less_mock,
          file.machine_cpu_ms_per_rollout_less_mock,
        ),
      };
    },
  },
  {
    name: 'side-by-side',
    description:
      "promptfoo's workload (500 single-turn prompts, 32 in flight, 50 ms latency): traj and promptfoo (PROMPTFOO_BIN), alternating, 3 runs each (goal: traj ≤ 1/3 of promptfoo's wall and CPU)",
    run: async (quick) =>
      (await import('./side-by-side.js')).sideBySideBenchmark({
        prompts: 500,
        concurrency: 32,
        latencyMs: 50,
        runs: quick ? 1 : 3,
      }),
  },
  {
    name: 'batch-4000x1-c1000',
    description:
      "traj batch: 4,000 prompts × 1 write_file turn, 1 s latency, 1,000 in flight, file toolset, 3 runs, the median reported, each beside a bare keep-alive client making the same calls (targets: achieved/ideal ≥ 0.8 where the bare client reaches ≥ 0.95; CPU per model call ≤ 3× the bare client's)",
    run: (quick) =>
      batchThroughputBenchmark({
        name: 'batch-4000x1-c1000',
        prompts: quick ? 1000 : 4000,
        toolTurns: 1,
        latencyMs: 1000,
        concurrency: 1000,
        toolsets: 'file',
        script: fileURLToPath(new URL('./file-tool-script.js', import.meta.url)),
        runs: quick ? 1 : 3,
        baseline: true,
      }),
  },
  {
    name: 'adaptive-concurrency',
    description:
      'traj batch vs an endpoint answering 429 past 16 in flight (50 ms latency): adaptive with --concurrency 64 vs fixed caps (goals: ≥ 0.9 of the best fixed throughput, < 5% of calls 429)',
    run: async (quick) =>
      (await import('./adaptive-concurrency.js')).adaptiveConcurrencyBenchmark({
        prompts: quick ? 800 : 3000,
        limit: 16,
        latencyMs: 50,
        fixedLevels: [8, 32],
        rounds: quick ? 1 : 2,
      }),
  },
  {
    name: 'resume-100k',
    description: 'resume of a 100,000-row run that is 99% done: time until the first new rollout (target < 3 s)',
    run: (quick) => resumeBenchmark(quick ? 20_000 : 100_000, 0.99),
  },
  {
    name: 'dataset-1m',
    description: 'reading and keying a 1,000,000-row JSONL dataset: peak RSS (target ≤ 300 MB)',
    run: async (quick) =>
      (await import('./dataset-memory.js')).datasetMemoryBenchmark(quick ? 200_000 : 1_000_000) as Promise<Figures>,
  },
  {
    name: 'view-100k',
    description:
      'traj view on a 100,000-row run store: load time of each page (runs, table, filters, sort, search, trajectory, plots, compare; target < 1 s)',
    run: async (quick) => (await import('./view-pages.js')).viewPagesBenchmark(quick ? 20_000 : 100_000),
  },
  {
    name: 'compress-1000',
    description:
      'traj compress: 1,000 records of ~48k Qwen3 tokens to 15,250, one summary each, 500 ms latency, 64 at once: wall time against the latency ideal',
    run: async (quick) =>
      (await import('./compress-throughput.js')).compressThroughputBenchmark({
        records: quick ? 200 : 1000,
        latencyMs: 500,
        concurrency: 64,
      }) as Promise<Figures>,
  },
  {
    name: 'local-sandbox',
    description:
      'local sandbox, bubblewrap vs plain processes: per-command overhead and per-rollout create+dispose p50/p95',
    run: async (quick) =>
      (await import('./local-sandbox.js')).localSandboxBenchmark(quick ? 30 : 100) as Promise<Figures>,
  },
  {
    name: 'scale-out',
    description:
      'traj worker over Redis: a CPU-bound tool workload on 1 and 3 workers, each a simulated machine (a cgroup capped at 0.3 core), 3 runs each, medians (target: ≥ 2.7×); then the coordinator’s limit in rollouts/s with trivially cheap rollouts',
    run: async (quick) =>
      (await import('./scale-out.js')).scaleOutBenchmark({
        prompts: quick ? 30 : 36,
        quota: 0.3,
        workerConcurrency: 2,
        repeats: quick ? 1 : 3,
        cheapPrompts: quick ? 600 : 1500,
      }),
  },
  {
    name: 'sandbox-lifecycle',
    description:
      'docker sandbox create + start + exec + dispose p50/p95 at concurrency 1 and 8, vs `docker run --rm IMAGE true`',
    run: async () => (await import('./sandbox-lifecycle.js')).sandboxLifecycleBenchmark() as Promise<Figures>,
  },
  {
    name: 'warm-pool',
    description:
      'docker sandbox request → first exec at c=8, with the warm pool (spares per image) and without it (target: warm p50 ≤ 100 ms)',
    run: async (quick) =>
      (await import('./warm-pool.js')).warmPoolBenchmark({ rounds: quick ? 3 : 6 }) as Promise<Figures>,
  },
  {
    name: 'browser-overhead',
    description:
      'browser toolset per rollout: isolated context → first page + snapshot → close, p50/p95 at concurrency 1 and 8',
    run: async (quick) =>
      (await import('./browser-overhead.js')).browserOverheadBenchmark({
        iterations: quick ? 16 : 40,
      }) as Promise<Figures>,
  },
];

/** Wide enough for the longest scenario name and two spaces. */
const NAME_COLUMN = Math.max(...SCENARIOS.map((scenario) => scenario.name.length)) + 2;

function usage(): string {
  return [
    'usage: npm run bench [-- [--only a,b] [--quick]]',
    '',
    'scenarios:',
    ...SCENARIOS.map((scenario) => `  ${scenario.name.padEnd(NAME_COLUMN)}${scenario.description}`),
  ].join('\n');
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${usage()}\n`);
    return 0;
  }
  const onlyIndex = argv.indexOf('--only');
  const only = onlyIndex >= 0 ? new Set((argv[onlyIndex + 1] ?? '').split(',')) : undefined;
  const quick = argv.includes('--quick');
  const unknown = only ? [...only].filter((name) => !SCENARIOS.some((scenario) => scenario.name === name)) : [];
  if (unknown.length > 0) {
    process.stderr.write(`bench: unknown scenario ${unknown.join(', ')}\n${usage()}\n`);
    return 2;
  }
  const results: Record<string, Figures> = {};
  let failed = 0;
  for (const scenario of SCENARIOS) {
    if (only && !only.has(scenario.name)) continue;
    process.stdout.write(`\n== ${scenario.name}: ${scenario.description}\n`);
    try {
      const figures = await scenario.run(quick);
      results[scenario.name] = figures;
      for (const [key, value] of Object.entries(figures))
        process.stdout.write(
          `   ${key.padEnd(36)}${typeof value === 'object' ? JSON.stringify(value) : String(value)}\n`,
        );
    } catch (error) {
      failed++;
      results[scenario.name] = { error: error instanceof Error ? error.message : String(error) };
      process.stdout.write(`   FAILED: ${error instanceof Error ? error.message : String(error)}\n`);
    }
  }
  const directory = join(projectRoot(), 'benchmarks', 'results');
  mkdirSync(directory, { recursive: true });
  const saved = { at: new Date().toISOString(), quick, node: process.version, results };
  const stamp = saved.at.replace(/[:.]/g, '-');
  writeFileSync(join(directory, `bench-${stamp}.json`), `${JSON.stringify(saved, null, 2)}\n`);
  writeFileSync(join(directory, 'latest.json'), `${JSON.stringify(saved, null, 2)}\n`);
  process.stdout.write(`\nsaved: benchmarks/results/latest.json (and bench-${stamp}.json)\n`);
  return failed > 0 ? 1 : 0;
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
