/**
 * The spawn host: a small child process that starts sandbox commands for its parent. Forking
 * copies the forking process's page tables, so a spawn from a large process (a traj worker pool
 * holds hundreds of MB) costs ~10 ms of blocked thread; from this small process, ~1 ms.
 * It is started with a scrubbed environment: a command can read its parent's /proc/PID/environ.
 * Messages: {type: 'run', id, request, session?} → {type: 'started', id, pid}, then {type: 'done',
 * id, result} or {type: 'failed', id, message}; {type: 'abort', id} kills that command's group.
 * {type: 'open', id, session, spec} starts a bubblewrap sandbox (namespace-session.ts) whose init
 * runs that session's commands → {type: 'opened', id} or failed; {type: 'close', id, session}
 * ends it, every process inside included → {type: 'closed', id}.
 * When the parent goes away (even by SIGKILL), every group and namespace still running is killed.
 */
import { NamespaceSession, type NamespaceSpec } from './namespace-session.js';
import { killProcessGroup, runInProcessGroup, type CommandRequest, type CommandResult } from './process-group.js';

export type HostRequest =
  | { type: 'run'; id: number; request: CommandRequest; session?: string }
  | { type: 'abort'; id: number }
  | { type: 'open'; id: number; session: string; spec: NamespaceSpec }
  | { type: 'close'; id: number; session: string };
export type HostReply =
  | { type: 'started'; id: number; pid: number }
  | { type: 'done'; id: number; result: CommandResult }
  | { type: 'opened'; id: number }
  | { type: 'closed'; id: number }
  | { type: 'failed'; id: number; message: string; code?: string };

const running = new Map<number, { controller: AbortController; pid?: number }>();
const sessions = new Map<string, NamespaceSession>();

function reply(message: HostReply): void {
  process.send?.(message);
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

async function open(message: Extract<HostRequest, { type: 'open' }>): Promise<void> {
  const session = new NamespaceSession(message.spec);
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
  await session?.close();
  reply({ type: 'closed', id: message.id });
}

process.on('message', (message: HostRequest) => {
  if (message.type === 'abort') running.get(message.id)?.controller.abort();
  else if (message.type === 'run') run(message);
  else if (message.type === 'open') void open(message);
  else void close(message);
});

process.on('disconnect', () => {
  for (const { pid } of running.values()) if (pid !== undefined) killProcessGroup(pid);
  for (const session of sessions.values()) session.kill();
  process.exit(0);
});
