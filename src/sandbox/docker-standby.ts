import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import { type Duplex, Transform, type TransformCallback } from 'node:stream';
import type Docker from 'dockerode';
import { withEngineRetry } from './docker-engine.js';

/**
 * A command's process, started before its command is known: `bash -c STANDBY_SCRIPT
 * traj-exec:TOKEN`, attached to stdin, stdout and stderr. Starting a process in a container (the
 * engine's exec: an HTTP exchange, then the runtime entering the container's namespaces) takes
 * 50 ms on a quiet machine and 150–700 ms on a busy one; a standby started ahead turns running a
 * command into a write and a read on a stream that is already open.
 *
 * It reads one request on stdin (NUL-terminated fields: mode, working directory, command, the
 * number of environment entries, the `NAME=value` entries), enters the directory, exports the
 * entries, writes one byte on stdout (ACK: from here on the output is the command's; NAK: the
 * directory is missing and nothing ran). Then `run` forks `bash -c COMMAND` with stdin from
 * /dev/null (`feed`: the rest of the stream, which the caller ends) and exits with its status:
 * it forks rather than execs so that it stays findable by its `$0` (the kill script of
 * docker-kill.ts) until the command ends; `shell` becomes the persistent shell (`bash --norc -s
 * traj-exec:TOKEN`, shell-protocol.ts). Its own variables are unset before the export, so none
 * reaches the command. Builtins only until the fork, and none newer than bash 3: bash reads a
 * pipe one byte at a time, so nothing past the request is consumed. Only `feed` needs the
 * connection to carry a half-close (a relay in front of the engine may not).
 */
const STANDBY_SCRIPT = `IFS= read -r -d '' m && IFS= read -r -d '' d && IFS= read -r -d '' c && IFS= read -r -d '' n || exit 125
e=()
while (( \${#e[@]} < n )); do IFS= read -r -d '' x || exit 125; e+=("$x"); done
builtin cd -P -- "$d" 2>/dev/null || { builtin printf '\\025'; exit 126; }
set -- "$m" "$c" "\${e[@]}"
unset m d c n e x OLDPWD
(( $# < 3 )) || builtin export -- "\${@:3}" 2>/dev/null
builtin printf '\\006'
[ "$1" = shell ] && builtin exec bash --norc -s "$0"
if [ "$1" = feed ]; then bash -c "$2"; else bash -c "$2" </dev/null; fi
exit $?`;

const ACK = 0x06;
const NAK = 0x15;

/** A started standby; `generation`: the container's restart count when it started (docker-restart.ts). */
export interface Standby {
  exec: Docker.Exec;
  stream: Duplex;
  token: string;
  generation: number;
}

/**
 * Start a standby in `container`. `env` (`NAME=value`) goes into the process's own environment:
 * for a request whose entries the standby could not export (exportable()). `signal` gives up on
 * the engine's answer: a start racing the container's removal may get none for minutes.
 */
export async function startStandby(
  container: Docker.Container,
  generation: number,
  options: { env?: string[]; signal?: AbortSignal } = {},
): Promise<Standby> {
  const token = randomBytes(8).toString('hex');
  const exec = await withEngineRetry(() =>
    container.exec({
      Cmd: ['bash', '-c', STANDBY_SCRIPT, `traj-exec:${token}`],
      Env: options.env ?? [],
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
      abortSignal: options.signal,
    }),
  );
  const stream = (await exec.start({ hijack: true, stdin: true, abortSignal: options.signal })) as Duplex;
  // A write after the process ended (a command that did not read its stdin) fails; not an error.
  stream.on('error', () => {});
  // A waiting standby must not keep the process alive, as an idle container does not: engage() it.
  connectionOf(stream)?.unref();
  return { exec, stream, token, generation };
}

/** The standby is in use from now on: its connection holds the process open until it ends. */
export function engage(standby: Standby): Standby {
  connectionOf(standby.stream)?.ref();
  return standby;
}

/** The engine connection under a standby's stream (a socket for unix and tcp engines). */
function connectionOf(stream: Duplex): Pick<Socket, 'ref' | 'unref'> | undefined {
  const socket = stream as Partial<Socket>;
  return typeof socket.ref === 'function' && typeof socket.unref === 'function'
    ? (socket as Pick<Socket, 'ref' | 'unref'>)
    : undefined;
}

/** The request a standby reads: `run` a command (`feed` it stdin), or become the persistent `shell`. */
export function standbyRequest(mode: 'run' | 'feed' | 'shell', cwd: string, command: string, env: string[]): Buffer {
  const fields = [mode, cwd, command, String(env.length), ...env];
  return Buffer.from(fields.map((field) => `${field}\0`).join(''), 'utf8');
}

/** Names bash refuses to export (readonly in every bash), and the shape of a name it accepts. */
const READONLY = new Set(['BASHOPTS', 'BASH_VERSINFO', 'EUID', 'PPID', 'SHELLOPTS', 'UID']);
const SHELL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Whether a standby started ahead can take this environment: every name one that `export` sets,
 * every value free of NUL (the request's separator). Otherwise the command gets a standby of its
 * own with the environment in its process, as the engine sets it.
 */
export function exportable(env: Record<string, string>): boolean {
  return Object.entries(env).every(
    ([name, value]) => SHELL_NAME.test(name) && !READONLY.has(name) && !value.includes('\0'),
  );
}

/**
 * Takes the standby's first stdout byte off the output: ACK (the command runs), NAK (its working
 * directory is missing). Anything else first is the runtime's own text (it could not start the
 * standby, e.g. every pid taken) and stays in the output.
 */
export class StartAcknowledgement extends Transform {
  state: 'waiting' | 'started' | 'cwd_missing' | 'not_started' = 'waiting';

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let rest = chunk;
    if (this.state === 'waiting' && chunk.length > 0) {
      const first = chunk[0];
      this.state = first === ACK ? 'started' : first === NAK ? 'cwd_missing' : 'not_started';
      if (this.state !== 'not_started') rest = chunk.subarray(1);
    }
    if (rest.length > 0) this.push(rest);
    done();
  }
}

/** The standby's environment entries, `NAME=value`, as the engine and the request take them. */
export function environmentEntries(env: Record<string, string>): string[] {
  return Object.entries(env).map(([name, value]) => `${name}=${value}`);
}
