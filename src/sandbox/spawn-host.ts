/**
 * The spawn host: a small child process that starts sandbox commands for its parent. Forking
 * copies the forking process's page tables, so a spawn from a large process (a traj worker pool
 * holds hundreds of MB) costs ~10 ms of blocked thread; from this small process, ~1 ms.
 * It is started with a scrubbed environment: a command can read its parent's /proc/PID/environ.
 * Messages: {type: 'run', id, request, session?} → {type: 'started', id, pid}, then {type: 'done',
 * id, result} or {type: 'failed', id, message}; {type: 'abort', id} kills that command's group.
 * {type: 'open', id, session, spec} has a zygote (zygote.ts, one per distinct spec.zygote) fork
 * a sandbox (namespace-session.ts) whose init runs that session's commands, or takes recycled
 * namespaces of the same spec → {type: 'opened', id} or failed; {type: 'close', id, session}
 * ends it, every process inside included, and recycles its namespaces when it may → {type: 'closed', id}.
 * {type: 'shell', id, request, session?} starts a persistent shell (request.keepStdin) → 'started',
 * once its session's namespaces are made when they are still being made (the parent sends it right behind 'open'),
 * then {type: 'output', id, stream, data} per chunk and {type: 'exited', id, code, error?} once it
 * ended and its pipes drained; {type: 'input', id, data} writes to its stdin, 'abort' kills its group.
 * When the parent goes away (even by SIGKILL), every group and namespace still running is killed.
 */
import { closeSync, readdirSync, readFileSync } from 'node:fs';
import { NamespaceSession, reuseKey, type NamespaceSpec } from './namespace-session.js';
import { Zygote, type ZygoteSpec } from './zygote.js';
import { removeCgroup, removeSpareCgroups } from './process-limit.js';
import {
  exitCodeOf,
  killProcessGroup,
  launchOnHost,
  runInProcessGroup,
  waitForPipes,
  type CommandRequest,
  type CommandResult,
  type StartedCommand,
} from './process-group.js';

/** How long the host waits at the end for its sandboxes' cgroups to empty and go. */
const CGROUP_REMOVAL_MS = 1_500;

/** How long an ended shell's pipes may stay open (a background job holds them) before it is reported. */
const SHELL_DRAIN_MS = 200;

export type HostRequest =
  | { type: 'run'; id: number; request: CommandRequest; session?: string }
  | { type: 'abort'; id: number }
  | { type: 'open'; id: number; session: string; spec: NamespaceSpec }
  | { type: 'close'; id: number; session: string }
  | { type: 'shell'; id: number; request: CommandRequest; session?: string }
  | { type: 'input'; id: number; data: Uint8Array };
export type HostReply =
  | { type: 'started'; id: number; pid: number }
  | { type: 'done'; id: number; result: CommandResult }
  | { type: 'opened'; id: number }
  | { type: 'closed'; id: number }
  | { type: 'output'; id: number; stream: 'stdout' | 'stderr'; data: Uint8Array }
  | { type: 'exited'; id: number; code: number; error?: string }
  | { type: 'failed'; id: number; message: string; code?: string };

const running = new Map<number, { controller: AbortController; pid?: number }>();
const sessions = new Map<string, NamespaceSession>();
/** Sessions whose namespaces are being made: a shell for one waits for it (its parent closes one only once made). */
const opening = new Map<string, Promise<void>>();
const shells = new Map<number, Pick<StartedCommand, 'write' | 'killGroup'>>();
/** Zygotes by their spec: one per sandbox user and folder layout, replaced when one dies. */
const zygotes = new Map<string, Zygote>();
/** Recycled namespaces waiting for the next sandbox of their spec (reuseKey), newest last. */
const idle = new Map<string, NamespaceSession[]>();
/** At most this many wait per spec: a run needs as many as it has sandboxes at once. */
const IDLE_KEPT = 128;

function zygoteFor(spec: ZygoteSpec): Zygote {
  const key = JSON.stringify(spec);
  let zygote = zygotes.get(key);
  if (!zygote?.alive) {
    zygote = new Zygote(spec);
    zygotes.set(key, zygote);
  }
  return zygote;
}

function reply(message: HostReply): void {
  // The parent may have exited a moment ago (an unref'd host outlives it while a killed shell
  // drains): with a callback, a write to its closed channel is dropped instead of crashing this
  // process with an unhandled EPIPE on the parent's terminal. 'disconnect' then cleans up.
  if (process.connected) process.send?.(message, undefined, undefined, () => {});
}

function failed(id: number, error: NodeJS.ErrnoException): void {
  reply({ type: 'failed', id, message: error.message, code: error.code });
}

function run(message: Extract<HostRequest, { type: 'run' }>): void {
  const session = message.session === undefined ? undefined : sessions.get(message.session);
  if (message.session !== undefined && !session) {
    failed(
      message.id,
      Object.assign(new Error(`sandbox session ${message.session} is not open`), { code: 'session_closed' }),
    );
    return;
  }
  const entry: { controller: AbortController; pid?: number } = { controller: new AbortController() };
  running.set(message.id, entry);
  const hooks = {
    signal: entry.controller.signal,
    onStart: (pid: number) => {
      entry.pid = pid;
      reply({ type: 'started', id: message.id, pid });
    },
  };
  runInProcessGroup(message.request, hooks, session?.launch)
    .then(
      (result) => reply({ type: 'done', id: message.id, result }),
      (error: NodeJS.ErrnoException) => failed(message.id, error),
    )
    .finally(() => running.delete(message.id));
}

/**
 * A shell asked for right behind its session's open (the parent does not wait for `opened`): its
 * input and abort are held until the namespaces are made, then it starts as any other.
 */
function shell(message: Extract<HostRequest, { type: 'shell' }>): void {
  const pending = message.session === undefined ? undefined : opening.get(message.session);
  if (!pending) return startShell(message);
  const input: Uint8Array[] = [];
  let aborted = false;
  shells.set(message.id, { write: (data) => input.push(data), killGroup: () => (aborted = true) });
  const start = () => {
    startShell(message);
    const started = shells.get(message.id);
    for (const data of input) started?.write(Buffer.from(data));
    if (aborted) started?.killGroup();
  };
  void pending.then(start, start);
}

function startShell(message: Extract<HostRequest, { type: 'shell' }>): void {
  shells.delete(message.id);
  const session = message.session === undefined ? undefined : sessions.get(message.session);
  if (message.session !== undefined && !session) {
    reply({ type: 'exited', id: message.id, code: 126, error: `sandbox session ${message.session} is not open` });
    return;
  }
  let child: StartedCommand;
  try {
    child = (session?.launch ?? launchOnHost)({ ...message.request, keepStdin: true });
  } catch (error) {
    reply({ type: 'exited', id: message.id, code: 126, error: (error as Error).message });
    return;
  }
  shells.set(message.id, child);
  if (child.pid !== undefined) reply({ type: 'started', id: message.id, pid: child.pid });
  child.stdout.on('data', (data: Buffer) => reply({ type: 'output', id: message.id, stream: 'stdout', data }));
  child.stderr.on('data', (data: Buffer) => reply({ type: 'output', id: message.id, stream: 'stderr', data }));
  let ended = false;
  const end = (code: number, error?: string) => {
    if (ended) return;
    ended = true;
    shells.delete(message.id);
    child.stdout.destroy();
    child.stderr.destroy();
    reply({ type: 'exited', id: message.id, code, ...(error === undefined ? {} : { error }) });
  };
  child.once('error', (error) => end(126, error.message));
  child.once('exit', (code, signal) => {
    const finish = () => end(exitCodeOf(code, signal, false));
    waitForPipes(child.stdout, child.stderr, SHELL_DRAIN_MS).then(finish, finish);
  });
}

/** A recycled namespace of the same spec with this sandbox's folder attached, if one is waiting. */
async function reused(spec: NamespaceSpec): Promise<NamespaceSession | undefined> {
  const waiting = spec.reuse ? idle.get(reuseKey(spec)) : undefined;
  for (let session = waiting?.pop(); session; session = waiting?.pop()) {
    try {
      await session.attach(spec.folder);
      return session;
    } catch {
      void session.close();
    }
  }
  return undefined;
}

/** Keep a closed sandbox's namespaces for the next of its spec if they came back as new; else end them. */
async function release(session: NamespaceSession): Promise<void> {
  const waiting = session.reuse === undefined ? undefined : (idle.get(session.reuse) ?? []);
  if (waiting && waiting.length < IDLE_KEPT && (await session.recycle())) {
    waiting.push(session);
    idle.set(session.reuse!, waiting);
    return;
  }
  await session.close();
}

async function open(message: Extract<HostRequest, { type: 'open' }>): Promise<void> {
  const session = (await reused(message.spec)) ?? new NamespaceSession(zygoteFor(message.spec.zygote), message.spec);
  sessions.set(message.session, session);
  try {
    await session.ready;
    reply({ type: 'opened', id: message.id });
  } catch (error) {
    sessions.delete(message.session);
    await session.close().catch(() => {});
    failed(message.id, error as NodeJS.ErrnoException);
  }
}

async function close(message: Extract<HostRequest, { type: 'close' }>): Promise<void> {
  const session = sessions.get(message.session);
  sessions.delete(message.session);
  if (session) await release(session);
  reply({ type: 'closed', id: message.id });
}

/** fork() gives the host stdin, stdout, stderr and its IPC channel, in that order. */
const IPC_FD = 3;
/** O_CLOEXEC in /proc/self/fdinfo's octal `flags` (Linux's generic value, x86_64 and arm64 alike). */
const O_CLOEXEC = 0o2000000;

/**
 * Close the descriptors this host inherited from whoever started traj (a CI runner's pipe, a
 * shell's open file): they would pass on, through bubblewrap or not, to every command. Each one
 * not marked close-on-exec past the IPC channel is such a descriptor: Node and libuv open their
 * own with O_CLOEXEC.
 */
function closeInheritedDescriptors(): void {
  let names: string[];
  try {
    names = readdirSync('/proc/self/fd');
  } catch {
    return;
  }
  for (const name of names) {
    const fd = Number(name);
    if (!(fd > IPC_FD)) continue;
    try {
      const flags = /^flags:\s*([0-7]+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1];
      if (flags !== undefined && (Number.parseInt(flags, 8) & O_CLOEXEC) === 0) closeSync(fd);
    } catch {
      // Gone meanwhile: readdir's own descriptor.
    }
  }
}

closeInheritedDescriptors();

process.on('message', (message: HostRequest) => {
  if (message.type === 'abort') {
    running.get(message.id)?.controller.abort();
    shells.get(message.id)?.killGroup();
  } else if (message.type === 'input') shells.get(message.id)?.write(Buffer.from(message.data));
  else if (message.type === 'shell') shell(message);
  else if (message.type === 'run') run(message);
  else if (message.type === 'open') {
    const made = open(message).finally(() => opening.delete(message.session));
    opening.set(message.session, made);
  } else void close(message);
});

process.on('disconnect', () => {
  for (const { pid } of running.values()) if (pid !== undefined) killProcessGroup(pid);
  for (const child of shells.values()) child.killGroup();
  const cgroups = [...sessions.values(), ...[...idle.values()].flat()].map((session) => session.kill());
  for (const zygote of zygotes.values()) zygote.kill();
  removeSpareCgroups();
  // The sandboxes' own cgroups go once their processes have left them (removeCgroup retries for
  // up to ~1 s); they would otherwise be left for prune, and a --workdir sandbox's never pruned.
  const removed = cgroups.filter((cgroup) => cgroup !== undefined).map((cgroup) => removeCgroup(cgroup));
  setTimeout(() => process.exit(0), CGROUP_REMOVAL_MS).unref();
  void Promise.all(removed).finally(() => process.exit(0));
});
