import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { Writable } from 'node:stream';
import { errorMessage } from '../errors.js';
import { withEngineRetry } from './docker-engine.js';
import { ExecDemultiplexer } from './docker-demux.js';
import { exitCodeOf, killTree, type ExecTarget } from './docker-exec.js';
import type { ShellHandlers, ShellProcess } from './persistent-shell.js';
import { SHELL_ARGV } from './shell-protocol.js';
import { scrubEnvironment } from './scrub-environment.js';

/**
 * The container's persistent shell: one exec of `bash -s` attached to stdin, stdout and stderr
 * for the whole rollout (it takes no exec slot of the sandbox's limiter: it is idle most of the
 * time). The runtime makes it a session and process-group leader; its token lets the kill
 * script of docker-exec.ts end it with everything it started. It goes away with the container.
 */
export function openDockerShell(target: ExecTarget, handlers: ShellHandlers): ShellProcess {
  const token = randomBytes(8).toString('hex');
  const pending: string[] = [];
  let stream: Duplex | undefined;
  let ended = false;
  const end = (code: number, error?: string) => {
    if (ended) return;
    ended = true;
    handlers.exit(code, error);
  };
  const env = Object.entries(scrubEnvironment({ ...target.env })).map(([name, value]) => `${name}=${value}`);
  void (async () => {
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
    const attached = (await exec.start({ hijack: true, stdin: true })) as Duplex;
    attached.on('error', () => {});
    const stderr = new Writable({
      write: (chunk: Buffer, _encoding, done) => {
        handlers.stderr(chunk);
        done();
      },
    });
    const demux = new ExecDemultiplexer(stderr);
    demux.on('data', (chunk: Buffer) => handlers.stdout(chunk));
    attached.pipe(demux);
    stream = attached;
    for (const text of pending.splice(0)) attached.write(text);
    await new Promise<void>((done) => {
      demux.once('end', done);
      demux.once('close', done);
      attached.once('close', () => demux.end());
    });
    end((await exitCodeOf(exec).catch(() => undefined)) ?? 137);
  })().catch((error: unknown) =>
    end(126, `cannot run the shell in sandbox ${target.sandboxId}: ${errorMessage(error)}`),
  );
  return {
    write: (text) => {
      if (stream) stream.write(text);
      else pending.push(text);
    },
    kill: () => {
      void killTree(target, token);
    },
  };
}
