import { randomBytes } from 'node:crypto';
import { CappedBuffer } from './capped-buffer.js';

/**
 * The text a persistent bash reads on its stdin (see persistent-shell.ts). The shell is started as
 * `bash --norc -s traj-exec:TOKEN` (the token lets the Docker kill script find it), reads
 * commands at top level (so `cd`, variables, `declare` and functions persist exactly as typed in
 * a terminal), and keeps a copy of its output pipes on fds 62 and 63 for the markers, so a
 * command's `exec >/dev/null` cannot hide them.
 */
export const SHELL_ARGV = (token: string): string[] => ['bash', '--norc', '-s', `traj-exec:${token}`];

export const SHELL_BOOT = 'set --\nexec 62>&1 63>&2\n';

/** The shell-quoted form of any text: single quotes, with each `'` closed, escaped and reopened. */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * A fresh pair of random halves. Markers are printed as `printf %s%s HALF1 HALF2`, so the whole
 * nonce never appears in the shell's input text (an `xtrace` line, a `history`): only the shell
 * itself prints it, after the command ended.
 */
export function newNonce(): [string, string] {
  const bytes = randomBytes(16).toString('hex');
  return [bytes.slice(0, 16), bytes.slice(16)];
}

/**
 * One call: the command evaluated at top level with stdin from /dev/null (a command reading stdin
 * cannot eat the next one), then on stdout `NONCE STATUS\n`, the state to restore a new shell
 * with (`cd` to the cwd, `export -p`), `NONCE\n`; on stderr `NONCE\n`. The epilogue is quiet
 * under `set -x` and uses builtins only: it costs no process.
 */
export function callText(command: string, nonce: [string, string], cwd?: string): string {
  const [first, second] = nonce;
  const enter = cwd === undefined ? '' : `builtin cd -- ${shellQuote(cwd)} && `;
  return (
    `${enter}builtin eval ${shellQuote(command)} </dev/null; ` +
    `{ builtin printf '%s%s %d\\n' ${first} ${second} "$?"; builtin printf 'builtin cd -- %q\\n' "$PWD"; ` +
    `builtin export -p; builtin printf '%s%s\\n' ${first} ${second}; } >&62 2>/dev/null; ` +
    `{ builtin printf '%s%s\\n' ${first} ${second} >&63; } 2>/dev/null\n`
  );
}

/** Restore a new shell's cwd and exported variables from the state the last call printed. */
export function restoreText(state: string): string {
  return `builtin eval ${shellQuote(state)} </dev/null >/dev/null 2>&1\n`;
}

/**
 * One output stream of one call: bytes up to the marker are the command's output (capped), the
 * rest is the epilogue. A marker split across chunks is found: the last bytes that could start
 * one are held back until the next chunk.
 */
export class MarkedStream {
  readonly output: CappedBuffer;
  private held: Buffer = Buffer.alloc(0);
  private rest?: Buffer;

  constructor(
    private readonly marker: Buffer,
    limit: number,
  ) {
    this.output = new CappedBuffer(limit);
  }

  get found(): boolean {
    return this.rest !== undefined;
  }

  /** What came after the marker (the epilogue), once it was seen. */
  get after(): Buffer | undefined {
    return this.rest;
  }

  push(chunk: Buffer): void {
    if (this.rest !== undefined) {
      this.rest = Buffer.concat([this.rest, chunk]);
      return;
    }
    const held = this.held.length === 0 ? chunk : Buffer.concat([this.held, chunk]);
    const at = held.indexOf(this.marker);
    if (at >= 0) {
      this.output.push(held.subarray(0, at));
      this.rest = held.subarray(at + this.marker.length);
      this.held = Buffer.alloc(0);
      return;
    }
    const safe = held.length - (this.marker.length - 1);
    if (safe > 0) {
      this.output.push(held.subarray(0, safe));
      this.held = held.subarray(safe);
    } else {
      this.held = held;
    }
  }

  /** The stream ended without a marker (the shell exited or was killed): all of it was output. */
  flush(): void {
    if (this.rest !== undefined) return;
    this.output.push(this.held);
    this.held = Buffer.alloc(0);
  }
}

/** The status and restore script from stdout's epilogue `STATUS\nSTATE NONCE\n`, once complete. */
export function parseEpilogue(after: Buffer, nonce: string): { status: number; state: string } | undefined {
  const end = after.indexOf(`${nonce}\n`);
  if (end < 0) return undefined;
  const text = after.subarray(0, end).toString('utf8');
  const newline = text.indexOf('\n');
  return { status: Number(text.slice(0, newline).trim()), state: text.slice(newline + 1) };
}
