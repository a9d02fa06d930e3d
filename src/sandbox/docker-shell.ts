import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { Writable } from 'node:stream';
import type Docker from 'dockerode';
import { errorMessage } from '../errors.js';
import { withEngineRetry } from './docker-engine.js';
import { ExecDemultiplexer } from './docker-demux.js';
import type { ExecTarget } from './docker-exec-target.js';
import { exitCodeOf } from './docker-exec-status.js';
import { endTree } from './docker-kill.js';
import type { ShellHandlers, ShellProcess } from './persistent-shell.js';
import { SHELL_ARGV } from './shell-protocol.js';
import { scrubEnvironment } from './scrub-environment.js';

interface StartedShell {
  exec: Docker.Exec;
  stream: Duplex;
}

/**
 * The container's persistent shell: one exec of `bash -s` attached to stdin, stdout and stderr
 * for the whole rollout (it takes no exec slot of the sandbox's limiter: it is idle most of the
 * time). The runtime makes it a session and process-group leader; its token lets endTree
 * (docker-kill.ts) end it with everything it started. It goes away with the container.
 */
export function openDockerShell(target: ExecTarget, handlers: ShellHandlers): ShellProcess {
  const token = randomBytes(8).toString('hex');
  const pending: string[] = [];
  let stream: Duplex | undefined;
  let attached: (shell: StartedShell) => void = () => {};
  const attaching = new Promise<StartedShell>((done) => {
    attached = done;
  });
  let stopping: Promise<void> | undefined;
  let ended = false;
  const end = (code: number, error?: string) => {
    if (ended) return;
    ended = true;
    handlers.exit(code, error);
  };
  const env = Object.entries(scrubEnvironment({ ...target.env })).map(([name, value]) => `${name}=${value}`);
  void (async () => {
    await target.restarter.settled();
    const generation = target.restarter.generation;
    const exec = await withEngineRetry(() =>
      target.container.exec({
        Cmd: SHELL_ARGV(token),
        Env: env,
        WorkingDir: target.workdir,
        AttachStdin: true,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
      }),
    );
    const started = (await exec.start({ hijack: true, stdin: true })) as Duplex;
    started.on('error', () => {});
    const stderr = new Writable({
      write: (chunk: Buffer, _encoding, done) => {
        handlers.stderr(chunk);
        done();
      },
    });
    const demux = new ExecDemultiplexer(stderr);
    demux.on('data', (chunk: Buffer) => handlers.stdout(chunk));
    started.pipe(demux);
    stream = started;
    attached({ exec, stream: started });
    for (const text of pending.splice(0)) started.write(text);
    await new Promise<void>((done) => {
      demux.once('end', done);
      demux.once('close', done);
      started.once('close', () => demux.end());
    });
    // A restart ends the shell's exec before the restart returns: the call ends once the container is back.
    await stopping?.catch(() => {});
    // A killed shell's code is the kill's, and a restarted container's engine may never report one.
    const killed = stopping !== undefined || target.restarter.generation !== generation;
    end(killed ? 137 : ((await exitCodeOf(exec).catch(() => undefined)) ?? 137));
  })().catch((error: unknown) =>
    end(126, `cannot run the shell in sandbox ${target.sandboxId}: ${errorMessage(error)}`),
  );
  return {
    write: (text) => {
      if (stream) stream.write(text);
      else pending.push(text);
    },
    kill: () => {
      stopping ??= attaching.then((shell) => endTree(target, shell.exec, token, shell.stream));
    },
  };
}
