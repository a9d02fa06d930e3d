import { closeSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * Write a file atomically: into a temp file beside it, then rename over it, so a crash or a kill
 * never leaves half a file where a whole one was. `content` is the text, or a writer that streams
 * into the open descriptor (for outputs too large to build as one string).
 */
export function writeFileAtomically(path: string, content: string | ((fd: number) => void)): void {
  // Absolute first: Node's recursive mkdir of a relative path spins forever (100% CPU, in mkdir
  // calls) once the working folder was deleted; resolving throws ENOENT instead.
  mkdirSync(resolve(dirname(path)), { recursive: true });
  const temporary = `${path}.tmp-${process.pid}`;
  const fd = openSync(temporary, 'w');
  try {
    if (typeof content === 'string') writeSync(fd, content);
    else content(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
}
