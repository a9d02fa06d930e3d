#!/usr/bin/env node
import { readFileSync, writeFileSync } from 'node:fs';
import { isTrajError } from '../errors.js';
import { closestMatch } from '../util/closest-match.js';
import { formatHelp, parseCommand } from './command.js';
import { COMMANDS } from './commands.js';
import { exitCodeFor, exitCodeHelp } from './exit-codes.js';

function mainHelp(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length)) + 2;
  const rows = Object.entries(COMMANDS).map(([name, entry]) => `  ${name.padEnd(width)}${entry.summary}`);
  return [
    'traj — a harness for tool-using LLM agents',
    '',
    'usage: traj <command> [options]     (traj help <command> or traj <command> --help for its options)',
    '',
    'commands:',
    ...rows,
    '',
    exitCodeHelp(),
  ].join('\n');
}

/** "unknown command 'bacth' (did you mean 'batch'?)", else the list of commands. */
function unknownCommand(name: string): number {
  const near = closestMatch(name, Object.keys(COMMANDS));
  const hint = near ? ` (did you mean '${near}'?)` : `; commands: ${Object.keys(COMMANDS).join(', ')}`;
  process.stderr.write(`traj: unknown command '${name}'${hint} (see 'traj --help')\n`);
  return 2;
}

export async function main(argv: string[]): Promise<number> {
  const [first, ...afterFirst] = argv;
  // `traj help CMD` is `traj CMD --help`.
  const [name, ...rest] =
    first === 'help' && afterFirst.length > 0 ? [afterFirst[0]!, '--help'] : [first, ...afterFirst];
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${mainHelp()}\n`);
    return name ? 0 : 2;
  }
  if (name === '--version') {
    process.stdout.write('traj 0.1.0\n');
    return 0;
  }
  const entry = COMMANDS[name];
  if (!entry) return unknownCommand(name);
  const command = await entry.load();
  try {
    const parsed = parseCommand(command, rest);
    if (parsed.help) {
      process.stdout.write(`${formatHelp(command)}\n`);
      return 0;
    }
    return await command.run(parsed);
  } catch (error) {
    return reportError(error);
  }
}

/** Print what ended a command and return its exit status (exit-codes.ts: the same table for every command). */
export function reportError(error: unknown): number {
  if (isTrajError(error)) process.stderr.write(`traj: ${error.message}\n`);
  else
    process.stderr.write(
      `traj: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
  return exitCodeFor(error);
}

/**
 * TRAJ_RESOURCE_REPORT=FILE: at exit, write this process's wall time, CPU (all threads) and peak
 * RSS as JSON — how `npm run bench` measures the real CLI end to end.
 */
function writeResourceReport(): void {
  const file = process.env.TRAJ_RESOURCE_REPORT;
  if (!file) return;
  const cpu = process.cpuUsage();
  const report = {
    wall_ms: Math.round(process.uptime() * 1000),
    cpu_user_ms: Math.round(cpu.user / 1000),
    cpu_system_ms: Math.round(cpu.system / 1000),
    cpu_children_ms: childrenCpuMs(),
    max_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
  };
  writeFileSync(file, `${JSON.stringify(report)}\n`);
}

/** CPU of exited children (the spawn hosts and the commands they ran), from /proc on Linux. */
function childrenCpuMs(): number {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
    // After "pid (comm) ", cutime and cstime are the 14th and 15th fields, in clock ticks (100 Hz).
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return 0;
  }
}

/**
 * `traj batch ... | head` and `... 2>&1 | head`: once the reader of stdout or stderr is gone,
 * further output there has nowhere to go. Drop it quietly and let the command finish its work
 * (a batch still writes its store and outputs) and exit with its own code, instead of dying on
 * an unhandled EPIPE.
 */
function ignoreClosedOutput(stream: NodeJS.WriteStream): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    stream.write = (() => true) as typeof stream.write;
  });
}

ignoreClosedOutput(process.stdout);
ignoreClosedOutput(process.stderr);
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.exitCode = reportError(error);
  },
);
process.on('exit', writeResourceReport);
