import type { Duplex } from 'node:stream';
import { Writable } from 'node:stream';
import type Docker from 'dockerode';
import { errorMessage } from '../errors.js';
import { ExecDemultiplexer } from './docker-demux.js';
import type { ExecTarget } from './docker-exec-target.js';
import { exitCodeOf } from './docker-exec-status.js';
import { endTree } from './docker-kill.js';
import {
  engage,
  environmentEntries,
  exportable,
  type Standby,
  StartAcknowledgement,
  standbyRequest,
} from './docker-standby.js';
import type { ShellHandlers, ShellProcess } from './persistent-shell.js';
import { scrubEnvironment } from './scrub-environment.js';

interface StartedShell {
  exec: Docker.Exec;
  token: string;
  stream: Duplex;
}

/**
 * The container's persistent shell: a standby (docker-standby.ts) asked to become `bash --norc
 * -s traj-exec:TOKEN`, attached to stdin, stdout and stderr for the whole rollout (it takes no
 * exec slot of the sandbox's limiter: it is idle most of the time). The runtime makes it a
 * session and process-group leader; its token lets endTree (docker-kill.ts) end it with
 * everything it started. It goes away with the container.
 */
export function openDockerShell(target: ExecTarget, handlers: ShellHandlers): ShellProcess {
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
  void (async () => {
    await target.restarter.settled();
    const generation = target.restarter.generation;
    const { standby, request } = await shellStandby(target);
    const { exec, token, stream: started } = engage(standby);
    const acknowledgement = new StartAcknowledgement();
    // What the process said before it started the shell: why it did not (the runtime's own text).
    let said = '';
    const early = (chunk: Buffer) => {
      if (acknowledgement.state !== 'started' && said.length < 1_000) said += chunk.toString('utf8');
    };
    const stderr = new Writable({
      write: (chunk: Buffer, _encoding, done) => {
        early(chunk);
        handlers.stderr(chunk);
        done();
      },
    });
    const demux = new ExecDemultiplexer(stderr);
    started.pipe(demux).pipe(acknowledgement);
    acknowledgement.on('data', (chunk: Buffer) => {
      early(chunk);
      handlers.stdout(chunk);
    });
    started.write(request);
    stream = started;
    attached({ exec, token, stream: started });
    for (const text of pending.splice(0)) started.write(text);
    await new Promise<void>((done) => {
      acknowledgement.once('end', done);
      acknowledgement.once('close', done);
      started.once('close', () => demux.end());
    });
    // A restart ends the shell's exec before the restart returns: the call ends once the container is back.
    await stopping?.catch(() => {});
    if (acknowledgement.state !== 'started' && stopping === undefined)
      return end(126, notStarted(target, acknowledgement, said));
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
      // A standby started while the killed tree ran (a fork bomb holding every pid) may have died
      // with it, or in the kill: the next shell gets one started after the tree is gone.
      stopping ??= attaching
        .then((shell) => endTree(target, shell.exec, shell.token, shell.stream))
        .finally(() => target.standbys.forget());
    },
  };
}

function notStarted(target: ExecTarget, acknowledgement: StartAcknowledgement, said: string): string {
  if (acknowledgement.state === 'cwd_missing')
    return `cannot start the shell in sandbox ${target.sandboxId}: its working directory ${target.workdir} does not exist`;
  const why = said.trim() === '' ? 'its process ended before it started' : said.trim();
  return `cannot start the shell in sandbox ${target.sandboxId}: ${why}`;
}

/** The shell's standby and request: the one started ahead when its environment can be exported, else its own. */
async function shellStandby(target: ExecTarget): Promise<{ standby: Standby; request: Buffer }> {
  const env = scrubEnvironment({ ...target.env });
  if (!exportable(env)) {
    const standby = await target.standbys.startOwn(environmentEntries(env));
    return { standby, request: standbyRequest('shell', target.workdir, '', []) };
  }
  try {
    return {
      standby: await target.standbys.claim(),
      request: standbyRequest('shell', target.workdir, '', environmentEntries(env)),
    };
  } finally {
    // The next command's process starts now.
    target.standbys.refill();
  }
}
