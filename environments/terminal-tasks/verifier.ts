import { join } from 'node:path';
import type { RewardContext, RewardOutput } from '../../src/eval/environment.js';
import type { ExecResult } from '../../src/sandbox/sandbox.js';
import type { TerminalTask } from './task-folder.js';
import { shellQuote } from '../../src/util/shell.js';
import { scriptVariables, taskPaths } from './task-paths.js';

/** Characters of the verifier's output kept in the record (its end, where pytest summarises). */
export const OUTPUT_TAIL_CHARS = 4_000;

export interface VerifierDetails {
  /** Where the score came from: the verifier's reward file, or its exit code when it wrote none. */
  source: 'reward.txt' | 'reward.json' | 'exit_code' | 'timeout';
  exit_code: number;
  timed_out: boolean;
  passed_tests: number;
  failed_tests: string[];
  output_tail: string;
}

/**
 * Score a finished rollout the Terminal-Bench way, in the rollout's own sandbox: clear whatever
 * the agent may have planted under the tests and logs folders, upload tests/ only now, run
 * `bash tests/test.sh` from the workdir within the verifier timeout, then read
 * logs/verifier/reward.txt (or reward.json), else use the exit code (0 → 1.0).
 */
export async function runVerifier(task: TerminalTask, context: RewardContext): Promise<RewardOutput> {
  const paths = taskPaths(task, context.sandbox);
  const prepare = await context.exec(
    `rm -rf ${shellQuote(paths.tests)} ${shellQuote(`${paths.logs}/verifier`)} && mkdir -p ${shellQuote(`${paths.logs}/verifier`)}`,
    { timeoutMs: 60_000 },
  );
  if (prepare.exitCode !== 0)
    throw new Error(`cannot prepare the verifier folders: ${tail(prepare.stderr || prepare.stdout, 500)}`);
  await context.upload(join(task.directory, 'tests'), paths.tests);
  const run = await context.exec(`bash ${shellQuote(`${paths.tests}/test.sh`)}`, {
    cwd: paths.workdir,
    timeoutMs: Math.round(task.verifier_timeout_sec * 1000),
    env: { ...task.verifier_env, ...scriptVariables(paths) },
  });
  const output = `${run.stdout}${run.stderr ? `\n${run.stderr}` : ''}`;
  const tests = pytestOutcomes(output);
  const base = {
    exit_code: run.exitCode,
    timed_out: run.timedOut,
    passed_tests: tests.passed,
    failed_tests: tests.failed,
    output_tail: tail(output, OUTPUT_TAIL_CHARS),
  };
  if (run.timedOut) return { score: 0, details: { ...base, source: 'timeout' } satisfies VerifierDetails };
  const written = await readRewardFiles(context, `${paths.logs}/verifier`);
  if (written.text !== undefined)
    return {
      score: parseRewardText(written.text),
      details: { ...base, source: 'reward.txt' } satisfies VerifierDetails,
    };
  if (written.json !== undefined) {
    const { score, scores } = parseRewardJson(written.json);
    return { score, scores, details: { ...base, source: 'reward.json' } satisfies VerifierDetails };
  }
  return { score: run.exitCode === 0 ? 1 : 0, details: { ...base, source: 'exit_code' } satisfies VerifierDetails };
}

/** The reward files the verifier wrote (each undefined when absent). */
async function readRewardFiles(context: RewardContext, folder: string): Promise<{ text?: string; json?: string }> {
  const show = (name: string) =>
    `if [ -f ${shellQuote(`${folder}/${name}`)} ]; then printf 'present\\n'; cat ${shellQuote(`${folder}/${name}`)}; fi`;
  const [text, json] = await Promise.all([context.exec(show('reward.txt')), context.exec(show('reward.json'))]);
  return { text: presentContent(text), json: presentContent(json) };
}

function presentContent(result: ExecResult): string | undefined {
  if (!result.stdout.startsWith('present\n')) return undefined;
  return result.stdout.slice('present\n'.length);
}

/** reward.txt holds one number (1 or 0 for the shared tasks; partial credit allowed). */
export function parseRewardText(text: string): number {
  const value = Number(text.trim());
  if (text.trim() === '' || !Number.isFinite(value))
    throw new Error(`the verifier wrote reward.txt but it is not a number: ${JSON.stringify(text.slice(0, 200))}`);
  return value;
}

/** reward.json (Harbor): {"reward": x, ...}; every numeric field is kept as a named score. */
export function parseRewardJson(text: string): { score: number; scores: Record<string, number> } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`the verifier wrote reward.json but it is not JSON: ${JSON.stringify(text.slice(0, 200))}`);
  }
  if (typeof parsed === 'number' && Number.isFinite(parsed)) return { score: parsed, scores: {} };
  const fields = parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  const scores = Object.fromEntries(
    Object.entries(fields).filter(
      (entry): entry is [string, number] => typeof entry[1] === 'number' && Number.isFinite(entry[1]),
    ),
  );
  const score = scores.reward ?? (Object.keys(scores).length === 1 ? Object.values(scores)[0] : undefined);
  if (score === undefined)
    throw new Error(`reward.json has no numeric "reward" field: ${JSON.stringify(text.slice(0, 200))}`);
  return { score, scores };
}

/** Test outcomes from pytest's `-rA` short summary (`PASSED path::test`, `FAILED path::test - why`). */
export function pytestOutcomes(output: string): { passed: number; failed: string[] } {
  let passed = 0;
  const failed: string[] = [];
  for (const line of output.split('\n')) {
    const match = /^(PASSED|FAILED|ERROR) (\S+)/.exec(line);
    if (!match) continue;
    if (match[1] === 'PASSED') passed++;
    else failed.push(testName(match[2]!));
  }
  return { passed, failed: [...new Set(failed)] };
}

/** `../tests/test_outputs.py::test_x` → `test_outputs.py::test_x` (the path depends on where pytest ran). */
function testName(id: string): string {
  const separator = id.indexOf('::');
  if (separator === -1) return id;
  return `${id.slice(0, separator).replace(/^.*\//, '')}${id.slice(separator)}`;
}

function tail(text: string, max: number): string {
  return text.length <= max
    ? text
    : `[... ${text.length - max} characters omitted ...]\n${text.slice(text.length - max)}`;
}
