import type { Sandbox } from '../../sandbox/sandbox.js';
import type { ToolResource } from '../tool-state.js';
import { ToolFailure } from '../tool-failure.js';

/** Output one poll or wait returns at most; the rest waits for the next poll (or log). */
export const POLL_MAX_BYTES = 20_000;
const STATE_KEY = 'process:table';

export interface BackgroundProcess {
  id: string;
  command: string;
  pid: number;
  /** The process group of the launching command, which holds the job and nothing else. */
  pgid: number;
  /** Absolute folder inside the sandbox: cmd, in (a FIFO for stdin), out, exit. */
  dir: string;
  startedAt: number;
  /** Bytes of output already returned by poll. */
  polled: number;
  killed: boolean;
  /** Set by `close`: stdin has had its EOF. */
  inputClosed?: boolean;
}

export type ProcessStatus = {
  session_id: string;
  command: string;
  state: 'running' | 'exited' | 'killed';
  exit_code: number | null;
  output_bytes: number;
  seconds: number;
};

/**
 * The background processes of one rollout, started and inspected with ordinary sandbox commands
 * (so they work in every backend). Each runs in its launcher's process group: the local sandbox
 * and the container both kill it at dispose, and `kill` ends the job with everything it started.
 */
export class ProcessTable implements ToolResource {
  private readonly processes = new Map<string, BackgroundProcess>();
  private next = 1;

  constructor(private readonly sandbox: Sandbox) {}

  static of(state: Map<string, unknown>, sandbox: Sandbox): ProcessTable {
    let table = state.get(STATE_KEY) as ProcessTable | undefined;
    if (!table) {
      table = new ProcessTable(sandbox);
      state.set(STATE_KEY, table);
    }
    return table;
  }

  async start(command: string, cwd: string | undefined): Promise<BackgroundProcess> {
    const id = `proc_${this.next++}`;
    const dir = `${this.sandbox.workdir.replace(/\/$/, '')}/.traj/proc/${id}`;
    await this.sandbox.writeFile(`${dir}/cmd`, command);
    // Straight to a file: a pipe through a capping filter would hold output in its buffer. stdin is a
    // FIFO that a sleeping keeper holds open for writing: killing the keeper (close) is the EOF.
    const keeper = `sleep infinity > ${dir}/in & echo $! > ${dir}/keeper`;
    const job = `${keeper}; bash ${dir}/cmd < ${dir}/in > ${dir}/out 2>&1; echo $? > ${dir}/exit; kill $(cat ${dir}/keeper) 2>/dev/null`;
    const launch = `mkfifo ${dir}/in && : > ${dir}/out && ( ${job} ) < /dev/null > /dev/null 2>&1 & echo $! $(ps -o pgid= -p $$)`;
    const result = await this.sandbox.exec(launch, { cwd, timeoutMs: 30_000 });
    const [pid, pgid] = result.stdout.trim().split(/\s+/).map(Number);
    if (result.exitCode !== 0 || !pid || !pgid)
      throw new Error(`could not start the background process: ${result.stderr.trim() || result.stdout.trim()}`);
    const process: BackgroundProcess = { id, command, pid, pgid, dir, startedAt: Date.now(), polled: 0, killed: false };
    this.processes.set(id, process);
    return process;
  }

  get(id: string): BackgroundProcess {
    const process = this.processes.get(id);
    if (!process) {
      const known = [...this.processes.keys()].join(', ') || '(none)';
      throw new ToolFailure(
        `no background process '${id}'`,
        `known: ${known}; start one with terminal(background: true)`,
      );
    }
    return process;
  }

  all(): BackgroundProcess[] {
    return [...this.processes.values()];
  }

  async status(process: BackgroundProcess): Promise<ProcessStatus> {
    const probe = await this.sandbox.exec(`cat ${process.dir}/exit 2>/dev/null; echo; stat -c %s ${process.dir}/out`, {
      timeoutMs: 30_000,
    });
    const [exit, size] = probe.stdout.split('\n');
    const exitCode = exit?.trim() ? Number(exit.trim()) : null;
    return {
      session_id: process.id,
      command: process.command,
      state: process.killed ? 'killed' : exitCode === null ? 'running' : 'exited',
      exit_code: exitCode,
      output_bytes: Number(size?.trim() ?? 0),
      seconds: Math.round((Date.now() - process.startedAt) / 100) / 10,
    };
  }

  /** Output bytes [from, from + max), as text. */
  async output(process: BackgroundProcess, from: number, max: number): Promise<string> {
    const read = await this.sandbox.exec(`tail -c +${from + 1} ${process.dir}/out | head -c ${max}`, {
      timeoutMs: 30_000,
    });
    return read.stdout;
  }

  async lines(process: BackgroundProcess, offset: number, limit: number): Promise<{ text: string; total: number }> {
    const read = await this.sandbox.exec(
      `wc -l < ${process.dir}/out; tail -n +${offset + 1} ${process.dir}/out | head -n ${limit}`,
      { timeoutMs: 30_000 },
    );
    const newline = read.stdout.indexOf('\n');
    return { total: Number(read.stdout.slice(0, newline)), text: read.stdout.slice(newline + 1) };
  }

  async wait(process: BackgroundProcess, seconds: number, signal: AbortSignal): Promise<void> {
    await this.sandbox.exec(
      `for _ in $(seq ${Math.ceil(seconds * 10)}); do [ -s ${process.dir}/exit ] && break; sleep 0.1; done`,
      {
        timeoutMs: Math.round(seconds * 1_000) + 10_000,
        signal,
      },
    );
  }

  async write(process: BackgroundProcess, input: string): Promise<void> {
    if (process.inputClosed)
      throw new ToolFailure(
        `cannot write to ${process.id}: its stdin was closed`,
        'start a new process to send more input',
      );
    const written = await this.sandbox.exec(`[ ! -s ${process.dir}/exit ] && timeout 5 cat > ${process.dir}/in`, {
      stdin: input,
      timeoutMs: 30_000,
    });
    if (written.exitCode !== 0)
      throw new ToolFailure(`cannot write to ${process.id}: it is no longer running`, 'poll it to see how it ended');
  }

  /** End the process's stdin (EOF): its reads return, and later writes are refused. */
  async closeInput(process: BackgroundProcess): Promise<void> {
    await this.sandbox.exec(`kill $(cat ${process.dir}/keeper 2>/dev/null) 2>/dev/null; true`, { timeoutMs: 30_000 });
    process.inputClosed = true;
  }

  async lineCount(process: BackgroundProcess): Promise<number> {
    const read = await this.sandbox.exec(`wc -l < ${process.dir}/out`, { timeoutMs: 30_000 });
    return Number(read.stdout.trim()) || 0;
  }

  async kill(process: BackgroundProcess): Promise<void> {
    process.killed = true;
    await this.sandbox.exec(
      `kill -TERM -- -${process.pgid} 2>/dev/null; sleep 0.3; kill -KILL -- -${process.pgid} 2>/dev/null; true`,
      { timeoutMs: 30_000 },
    );
  }

  /** At the end of the rollout: kill what still runs (the sandbox's own dispose would too). */
  async dispose(): Promise<void> {
    const groups = this.all()
      .filter((process) => !process.killed)
      .map((process) => `-${process.pgid}`);
    if (groups.length === 0) return;
    await this.sandbox
      .exec(`kill -KILL -- ${groups.join(' ')} 2>/dev/null; true`, { timeoutMs: 30_000 })
      .catch(() => undefined);
  }
}
