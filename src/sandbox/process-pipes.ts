import { closeSync, constants, fstatSync, openSync, type Stats, statSync } from 'node:fs';

/** A pipe end another process holds: its descriptor there, the pipe's inode, and how to open it here. */
export interface HeldPipe {
  descriptor: number;
  inode: number;
  access: 'read' | 'write';
}

/**
 * Open pipe ends that process `pid` holds, through /proc/PID/fd (allowed as root, and to the owner
 * of the user namespace the process's memory belongs to, even when it is not dumpable). Each must
 * be the very pipe named (its inode), checked before the open and again on what was opened: should
 * the process have died and its pid gone to another, nothing of that process's is opened.
 * Descriptors are non-blocking. Undefined when any end is gone; a refusal (EACCES, EPERM) throws.
 */
export function openHeldPipes(pid: number, pipes: HeldPipe[]): number[] | undefined {
  const opened: number[] = [];
  const named = (stat: Stats, inode: number) => stat.isFIFO() && stat.ino === inode;
  const giveUp = () => {
    for (const fd of opened) closeSync(fd);
    return undefined;
  };
  try {
    for (const pipe of pipes) {
      const path = `/proc/${pid}/fd/${pipe.descriptor}`;
      if (!named(statSync(path), pipe.inode)) return giveUp();
      const flags = pipe.access === 'write' ? constants.O_WRONLY : constants.O_RDONLY;
      opened.push(openSync(path, flags | constants.O_NONBLOCK));
      if (!named(fstatSync(opened.at(-1)!), pipe.inode)) return giveUp();
    }
    return opened;
  } catch (error) {
    giveUp();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM') throw error;
    return undefined;
  }
}

/**
 * The pipe ends another process reports as `descriptor inode` pairs, in order, each opened here
 * for `access` (the same order); undefined when the numbers do not match.
 */
export function reportedPipes(numbers: number[], access: HeldPipe['access'][]): HeldPipe[] | undefined {
  if (numbers.length !== access.length * 2 || numbers.some((number) => !Number.isInteger(number))) return undefined;
  return access.map((how, index) => ({ descriptor: numbers[index * 2]!, inode: numbers[index * 2 + 1]!, access: how }));
}
