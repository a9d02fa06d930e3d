import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import { delay, withEngineRetry } from './docker-engine.js';
import type { ExecTarget } from './docker-exec-target.js';
import { closedWithin, containerGone, exitCodeOf, streamClosed } from './docker-exec-status.js';

/**
 * Kills every session holding a process whose `$0` is `traj-exec:$1` (the wrapper of a command,
 * or the persistent shell, and their forks): the session leader's process group in one kill(2)
 * (atomic against a fork bomb), then stragglers that moved to another group of the session.
 * Only bash builtins: under a fork bomb the one slot this script gets is all it has. Exits 3
 * when no such process is left (the command exited, maybe leaving its tree behind). Processes
 * that start a session of their own (daemons) escape, as with GNU `timeout`.
 */
const KILL_SCRIPT = `target="traj-exec:$1"
declare -A ended=()
for proc in /proc/[0-9]*; do
  mapfile -d '' -t argv 2>/dev/null < "$proc/cmdline" || continue
  [ "\${argv[3]-}" = "$target" ] || continue
  read -r stat 2>/dev/null < "$proc/stat" || continue
  fields=(\${stat##*\\) })
  session=\${fields[3]-0}
  (( session > 1 )) && [ -z "\${ended[$session]-}" ] || continue
  ended[$session]=1
  kill -KILL -- "-$session" 2>/dev/null
  for other in /proc/[0-9]*; do
    read -r stat 2>/dev/null < "$other/stat" || continue
    fields=(\${stat##*\\) })
    [ "\${fields[3]-}" = "$session" ] && kill -KILL "\${other#/proc/}" 2>/dev/null
  done
done
(( \${#ended[@]} > 0 )) || exit 3
exit 0`;
const NOTHING_FOUND = 3;

/** Tries of the kill script: a runtime that cannot start it (every pid taken) is met by a restart. */
const KILL_ATTEMPTS = 3;
/**
 * After a kill that ran, how long its tree may take to die before it counts as not ended.
 * Generous: a slow, busy machine may take seconds to tear down a large tree, and too short
 * costs a needless restart.
 */
const TREE_END_GRACE_MS = 10_000;
const TREE_POLL_MS = 250;
/** After the restart, how long the engine may take to close the output stream before we do. */
const STREAM_CLOSE_GRACE_MS = 3_000;

type KillOutcome = 'killed' | 'nothing_found' | 'failed';

/**
 * End a timed-out or aborted command's tree (`exec`, started with `token`, writing to `output`):
 * the kill script, and when that cannot run (a fork bomb holding every pid leaves none for its
 * exec) or the tree outlives it (its leader had exited, or the kill missed some), a restart of
 * the container.
 */
export async function endTree(target: ExecTarget, exec: Docker.Exec, token: string, output: Duplex): Promise<void> {
  try {
    if (!(await treeEnded(target, exec, token))) await target.restarter.restart();
  } finally {
    // The kill or the restart ended the exec; an engine that keeps its stream open must not hold the caller.
    if (!(await closedWithin(output, STREAM_CLOSE_GRACE_MS))) output.destroy();
  }
}

/**
 * Kill the tree from inside, then watch its session from the engine's side (`docker top` needs
 * no pid in the container) until no live process is left in it.
 */
async function treeEnded(target: ExecTarget, exec: Docker.Exec, token: string): Promise<boolean> {
  const kill = await killTree(target, token);
  if (kill === 'failed') return false;
  const session = await hostPid(exec);
  // Without a way to watch, trust a kill that found its tree.
  if (session === undefined) return kill === 'killed';
  // A tree whose leader was gone before the kill is beyond its reach: no point waiting for it.
  const deadline = performance.now() + (kill === 'killed' ? TREE_END_GRACE_MS : 0);
  for (;;) {
    const live = await liveInSession(target, session);
    if (live === undefined) return kill === 'killed';
    if (live === 0) return true;
    if (performance.now() >= deadline) return false;
    await delay(TREE_POLL_MS);
  }
}

/** Run the kill script, again while the runtime cannot start it (a fork bomb holding every pid). */
async function killTree(target: ExecTarget, token: string): Promise<KillOutcome> {
  for (let attempt = 1; attempt <= KILL_ATTEMPTS; attempt++) {
    await target.restarter.settled();
    try {
      const exec = await withEngineRetry(() =>
        target.container.exec({
          Cmd: ['bash', '-c', KILL_SCRIPT, 'traj-kill', token],
          AttachStdout: true,
          AttachStderr: true,
        }),
      );
      const stream = (await exec.start({})) as Duplex;
      stream.resume();
      await streamClosed(stream);
      const code = await exitCodeOf(exec);
      if (code === 0) return 'killed';
      if (code === NOTHING_FOUND) return 'nothing_found';
    } catch (error) {
      // A removed or stopped container has nothing left to kill; a busy runtime gets another try.
      if (containerGone(error)) return 'killed';
    }
    if (attempt < KILL_ATTEMPTS) await delay(100 * attempt);
  }
  return 'failed';
}

/** The exec's process id on the engine's host: the id of the session it leads. */
async function hostPid(exec: Docker.Exec): Promise<number | undefined> {
  const info = await withEngineRetry(() => exec.inspect()).catch(() => undefined);
  return info?.Pid ? info.Pid : undefined;
}

/** Live (not zombie) processes of the container in that host session; undefined when the engine cannot tell. */
async function liveInSession(target: ExecTarget, session: number): Promise<number | undefined> {
  try {
    const top = (await withEngineRetry(() => target.container.top({ ps_args: '-o pid,sid,stat' }))) as ProcessList;
    const sid = top.Titles.indexOf('SID');
    const stat = top.Titles.indexOf('STAT');
    if (sid < 0 || stat < 0) return undefined;
    return top.Processes.filter((row) => Number(row[sid]) === session && !row[stat]?.startsWith('Z')).length;
  } catch (error) {
    return containerGone(error) ? 0 : undefined;
  }
}

/** What the engine's `top` answers: ps's column titles and one row of columns per process. */
interface ProcessList {
  Titles: string[];
  Processes: string[][];
}
