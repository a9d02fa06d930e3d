import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, scratchDirectory, startMockServer } from './processes.js';
import { scriptedBatchArgs } from '../../src/testing/index.js';

/**
 * promptfoo's own workload (N single-turn prompts, J in flight, L ms mock latency) run by traj and,
 * when promptfoo is installed, by promptfoo, alternating, against the same mock endpoint. Both are
 * measured the same way: /usr/bin/time around the whole command (wall, user+sys of the process,
 * its threads and its waited-for children, peak RSS).
 *
 * promptfoo is never a dependency of traj: install it into a scratch folder
 * (`cd /tmp/promptfoo-bench && npm install promptfoo`) and point PROMPTFOO_BIN at its binary;
 * /tmp/promptfoo-bench/node_modules/.bin/promptfoo is found without it.
 */
export interface SideBySideOptions {
  prompts: number;
  concurrency: number;
  latencyMs: number;
  runs: number;
}

interface Timed {
  wall_s: number;
  cpu_s: number;
  peak_rss_mb: number;
}

const DEFAULT_PROMPTFOO = '/tmp/promptfoo-bench/node_modules/.bin/promptfoo';

export function promptfooBinary(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const candidate = env.PROMPTFOO_BIN ?? DEFAULT_PROMPTFOO;
  return existsSync(candidate) ? candidate : undefined;
}

export async function sideBySideBenchmark(options: SideBySideOptions): Promise<Record<string, unknown>> {
  const scratch = scratchDirectory('traj-bench-side-');
  const server = await startMockServer(['--latency-ms', String(options.latencyMs), '--tool-turns', '0']);
  const promptfoo = promptfooBinary();
  try {
    const prompts = Array.from({ length: options.prompts }, (_, index) => `benchmark prompt ${index}`);
    writeFileSync(
      join(scratch.path, 'prompts.jsonl'),
      `${prompts.map((prompt) => JSON.stringify({ prompt })).join('\n')}\n`,
    );
    writeFileSync(join(scratch.path, 'tests.csv'), `prompt\n${prompts.join('\n')}\n`);
    writeFileSync(
      join(scratch.path, 'promptfooconfig.yaml'),
      [
        "prompts: ['{{prompt}}']",
        'providers:',
        '  - id: openai:chat:traj-scripted',
        `    config: { apiBaseUrl: '${server.url}', apiKey: none }`,
        'tests: file://tests.csv',
        '',
      ].join('\n'),
    );
    const traj: Timed[] = [];
    const peer: Timed[] = [];
    for (let run = 0; run < options.runs; run++) {
      traj.push(
        await timed([process.execPath, CLI, ...trajArgs(scratch.path, server.url, options, run)], scratch.path, {}),
      );
      if (promptfoo)
        peer.push(await timed([promptfoo, ...promptfooArgs(options)], scratch.path, promptfooEnv(scratch.path)));
    }
    const ideal = (options.prompts * options.latencyMs) / 1000 / options.concurrency;
    const trajMedian = medians(traj);
    const figures: Record<string, unknown> = {
      prompts: options.prompts,
      in_flight: options.concurrency,
      latency_ms: options.latencyMs,
      runs_each: options.runs,
      ideal_wall_s: round(ideal),
      traj_wall_s_median: trajMedian.wall_s,
      traj_cpu_s_median: trajMedian.cpu_s,
      traj_cpu_ms_per_model_call: round((trajMedian.cpu_s * 1000) / options.prompts),
      traj_peak_rss_mb_median: trajMedian.peak_rss_mb,
      traj_runs: traj,
    };
    if (!promptfoo)
      return {
        ...figures,
        promptfoo: `not installed: set PROMPTFOO_BIN, or npm install promptfoo in /tmp/promptfoo-bench (looked for ${DEFAULT_PROMPTFOO})`,
      };
    const peerMedian = medians(peer);
    return {
      ...figures,
      promptfoo_version: promptfooVersion(promptfoo),
      promptfoo_wall_s_median: peerMedian.wall_s,
      promptfoo_cpu_s_median: peerMedian.cpu_s,
      promptfoo_cpu_ms_per_model_call: round((peerMedian.cpu_s * 1000) / options.prompts),
      promptfoo_peak_rss_mb_median: peerMedian.peak_rss_mb,
      promptfoo_runs: peer,
      wall_ratio_traj_over_promptfoo: round(trajMedian.wall_s / peerMedian.wall_s),
      cpu_ratio_traj_over_promptfoo: round(trajMedian.cpu_s / peerMedian.cpu_s),
    };
  } finally {
    await server.stop();
    scratch.remove();
  }
}

function trajArgs(directory: string, url: string, options: SideBySideOptions, run: number): string[] {
  return scriptedBatchArgs(join(directory, 'prompts.jsonl'), `side-${run}`, url, 'NO_KEY', [
    '--toolsets',
    'file',
    '--concurrency',
    String(options.concurrency),
  ]);
}

function promptfooArgs(options: SideBySideOptions): string[] {
  return [
    'eval',
    '-c',
    'promptfooconfig.yaml',
    '-j',
    String(options.concurrency),
    '--no-cache',
    '--no-table',
    '--no-progress-bar',
    '--no-share',
  ];
}

/** No telemetry, no update check, its database in the scratch folder, no log files. */
function promptfooEnv(directory: string): NodeJS.ProcessEnv {
  const home = join(directory, 'promptfoo-home');
  mkdirSync(home, { recursive: true });
  // Its file loggers sometimes crash at exit ("write after end" in winston): they are off.
  return {
    PROMPTFOO_DISABLE_TELEMETRY: '1',
    PROMPTFOO_DISABLE_UPDATE: '1',
    PROMPTFOO_DISABLE_DEBUG_LOG: '1',
    PROMPTFOO_DISABLE_ERROR_LOG: '1',
    PROMPTFOO_CONFIG_DIR: home,
    OPENAI_API_KEY: 'none',
  };
}

/** The command under /usr/bin/time: elapsed, user, system seconds and peak RSS in KiB. */
async function timed(command: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Timed> {
  const report = join(cwd, `time-${process.hrtime.bigint()}.txt`);
  const child = spawn('/usr/bin/time', ['-o', report, '-f', '%e %U %S %M', ...command], {
    cwd,
    env: { ...process.env, OPENAI_API_KEY: '', OPENAI_BASE_URL: '', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`${command.slice(0, 3).join(' ')} exited ${code}: ${stderr}`);
  const [elapsed, user, system, rssKib] = readFileSync(report, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
  return { wall_s: elapsed!, cpu_s: round(user! + system!), peak_rss_mb: Math.round(rssKib! / 1024) };
}

function promptfooVersion(binary: string): string {
  const manifest = join(binary, '..', '..', 'promptfoo', 'package.json');
  return existsSync(manifest) ? (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version : 'unknown';
}

function medians(runs: Timed[]): Timed {
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  return {
    wall_s: median(runs.map((run) => run.wall_s)),
    cpu_s: median(runs.map((run) => run.cpu_s)),
    peak_rss_mb: median(runs.map((run) => run.peak_rss_mb)),
  };
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
