/**
 * The spawn host: a small child process that starts sandbox commands for its parent. Forking
 * copies the forking process's page tables, so a spawn from a large process (a traj worker pool
 * holds hundreds of MB) costs ~10 ms of blocked thread; from this small process, ~1 ms.
 * Messages: {type: 'run', id, request} → {type: 'started', id, pid}, then {type: 'done', id,
 * result} or {type: 'failed', id, message}; {type: 'abort', id} kills that command's group.
 * When the parent goes away (even by SIGKILL), every group still running is killed.
 */
import { killProcessGroup, runInProcessGroup, type CommandRequest, type CommandResult } from './process-group.js';

export type HostRequest = { type: 'run'; id: number; request: CommandRequest } | { type: 'abort'; id: number };
export type HostReply =
  | { type: 'started'; id: number; pid: number }
  | { type: 'done'; id: number; result: CommandResult }
  | { type: 'failed'; id: number; message: string; code?: string };

const running = new Map<number, { controller: AbortController; pid?: number }>();

function reply(message: HostReply): void {
  process.send?.(message);
}

process.on('message', (message: HostRequest) => {
  if (message.type === 'abort') {
    running.get(message.id)?.controller.abort();
    return;
  }
  const entry: { controller: AbortController; pid?: number } = { controller: new AbortController() };
  running.set(message.id, entry);
  runInProcessGroup(message.request, {
    signal: entry.controller.signal,
    onStart: (pid) => {
      entry.pid = pid;
      reply({ type: 'started', id: message.id, pid });
    },
  }).then(
    (result) => reply({ type: 'done', id: message.id, result }),
    (error: NodeJS.ErrnoException) => reply({ type: 'failed', id: message.id, message: error.message, code: error.code }),
  ).finally(() => running.delete(message.id));
});

process.on('disconnect', () => {
  for (const { pid } of running.values()) if (pid !== undefined) killProcessGroup(pid);
  process.exit(0);
});
