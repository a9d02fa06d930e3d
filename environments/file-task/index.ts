import { defineEnvironment, type RewardContext } from '../../src/eval/index.js';

/**
 * Small tasks whose result is files in the sandbox. The reward never trusts the agent's words:
 * it lists, reads and runs what the agent left, and reports each check as evidence.
 */
interface FileTask {
  id: string;
  category: 'files' | 'scripts';
  instruction: string;
  /** Fixtures written into the sandbox before the agent starts. */
  fixtures?: Record<string, string>;
  checks: Check[];
}

type Check =
  | { kind: 'first_line'; path: string; expected: string }
  | { kind: 'lines'; path: string; expected: string[] }
  | { kind: 'absent'; path: string }
  | { kind: 'last_line'; path: string; expected: string }
  | { kind: 'command_output'; command: string; expected: string };

interface CheckResult {
  check: string;
  ok: boolean;
  expected?: string | string[];
  actual?: string | string[] | null;
}

export const TASKS: FileTask[] = [
  {
    id: 'sum-report',
    category: 'files',
    instruction:
      'Create a file report.txt in the current directory whose first line is the sum of 17, 25 and 58 (just the number).',
    checks: [{ kind: 'first_line', path: 'report.txt', expected: '100' }],
  },
  {
    id: 'even-numbers',
    category: 'files',
    instruction:
      'Create the file numbers/evens.txt listing the even numbers from 1 to 10 in increasing order, one per line.',
    checks: [{ kind: 'lines', path: 'numbers/evens.txt', expected: ['2', '4', '6', '8', '10'] }],
  },
  {
    id: 'count-script',
    category: 'scripts',
    instruction:
      'Write a bash script count.sh that prints the number of lines of data.csv (the file is already here). Print only the number.',
    fixtures: { 'data.csv': 'id,value\n1,a\n2,b\n3,c\n4,d\n5,e\n6,f\n' },
    checks: [{ kind: 'command_output', command: 'bash count.sh', expected: '7' }],
  },
  {
    id: 'approve-draft',
    category: 'files',
    instruction: 'Rename draft.md to final.md and append a last line that says exactly: approved',
    fixtures: { 'draft.md': '# Proposal\n\nShip the feature on Monday.\n' },
    checks: [
      { kind: 'absent', path: 'draft.md' },
      { kind: 'last_line', path: 'final.md', expected: 'approved' },
    ],
  },
];

async function readText(context: RewardContext, path: string): Promise<string | null> {
  try {
    return (await context.readFile(path)).toString('utf8');
  } catch {
    return null;
  }
}

function lines(text: string): string[] {
  return text
    .replace(/\r\n/g, '\n')
    .replace(/\n+$/, '')
    .split('\n')
    .map((line) => line.trim());
}

async function runCheck(check: Check, context: RewardContext, files: string[]): Promise<CheckResult> {
  switch (check.kind) {
    case 'first_line':
    case 'last_line': {
      const text = await readText(context, check.path);
      const all = text === null ? [] : lines(text);
      const actual = text === null ? null : ((check.kind === 'first_line' ? all[0] : all.at(-1)) ?? '');
      return {
        check: `${check.kind.replace('_', ' ')} of ${check.path}`,
        ok: actual === check.expected,
        expected: check.expected,
        actual,
      };
    }
    case 'lines': {
      const text = await readText(context, check.path);
      const actual = text === null ? null : lines(text);
      return {
        check: `lines of ${check.path}`,
        ok: actual !== null && actual.join('\n') === check.expected.join('\n'),
        expected: check.expected,
        actual,
      };
    }
    case 'absent':
      return {
        check: `${check.path} is gone`,
        ok: !files.includes(check.path),
        expected: 'absent',
        actual: files.includes(check.path) ? 'present' : 'absent',
      };
    case 'command_output': {
      const result = await context.exec(check.command, { timeoutMs: 10_000 });
      const actual = result.stdout.trim();
      return {
        check: `\`${check.command}\` prints ${check.expected}`,
        ok: result.exitCode === 0 && actual === check.expected,
        expected: check.expected,
        actual: result.exitCode === 0 ? actual : `exit ${result.exitCode}: ${result.stderr.trim().slice(0, 200)}`,
      };
    }
  }
}

export default defineEnvironment<FileTask>({
  name: 'file-task',
  version: '1',
  description: 'Create or change files in the sandbox; the reward inspects the files the agent left.',
  items: ({ limit }) => TASKS.slice(0, limit ?? TASKS.length),
  id: (task) => task.id,
  prompt: (task) => task.instruction,
  category: (task) => task.category,
  toolsets: ['terminal', 'file'],
  maxTurns: 8,
  passThreshold: 1,
  rescore: 'replay',
  async setup(task, sandbox) {
    for (const [path, content] of Object.entries(task.fixtures ?? {})) await sandbox.writeFile(path, content);
  },
  /** 1 when every check holds, else 0; `details` lists each check with what was expected and found. */
  async reward(task, _result, context) {
    const files = await context.listFiles();
    const checks: CheckResult[] = [];
    for (const check of task.checks) checks.push(await runCheck(check, context, files));
    const passed = checks.filter((check) => check.ok).length;
    return {
      score: passed === checks.length ? 1 : 0,
      scores: { checks_passed: passed / checks.length },
      details: { files, checks },
    };
  },
});
