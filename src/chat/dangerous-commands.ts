/**
 * Shell commands that can do lasting damage outside a throwaway folder. The local sandbox runs
 * commands on the host, so chat asks before running one of these; the docker sandbox does not.
 * Patterns are heuristics over a normalised command, tuned to catch the usual forms without
 * flagging everyday commands (`rm -rf build/`, `truncate -s 0 log`, `cat /etc/hosts`).
 */
export interface DangerousPattern {
  /** Stable id: what "always" approvals store in TRAJ_HOME/config.yaml. */
  id: string;
  description: string;
  pattern: RegExp;
}

/** A command position: start of the text, after a separator, a subshell or `sudo`. */
const AT_COMMAND = String.raw`(?:^|[;&|({]\s*|\bsudo\s+|\bexec\s+|\bxargs\s+)`;
/** Until the end of this simple command. */
const REST = String.raw`[^;&|\n]*`;
const END = String.raw`(?=\s|$|[;&|)])`;
const RECURSIVE_FLAG = '(?:-[a-z]*r[a-z]*|--recursive)';
const SYSTEM_DIRECTORIES = 'bin|boot|dev|etc|home|lib|lib32|lib64|opt|root|sbin|srv|usr|var|sys|proc|mnt|media';
/** `/`, `/*`, `~`, `~/*`, `*`, `.`, `..`, `../*`, `$home`, `${home}/*`, and top-level system folders. */
const BROAD_PATH = String.raw`(?:\/\*?|~\/?\*?|\*|\.\.?\/?\*?|\$\{?home\}?\/?\*?|\/(?:${SYSTEM_DIRECTORIES})\/?\*?)`;

/** Roots a `find … -delete` must not walk: /, ~, $HOME and the top-level system folders. */
const ROOT_PATH = String.raw`(?:\/|~\/?|\$\{?home\}?\/?|\/(?:${SYSTEM_DIRECTORIES})\/?)`;

const rx = (source: string) => new RegExp(source);

export const DANGEROUS_PATTERNS: readonly DangerousPattern[] = [
  {
    id: 'recursive_delete',
    description: 'recursive delete of a broad path (/, ~, *, .., $HOME or a system folder)',
    pattern: rx(`${AT_COMMAND}rm\\s+(?:${REST}\\s)?${RECURSIVE_FLAG}\\b(?:${REST}\\s)?${BROAD_PATH}${END}`),
  },
  { id: 'no_preserve_root', description: 'rm --no-preserve-root', pattern: /\brm\s[^;&|\n]*--no-preserve-root\b/ },
  {
    id: 'find_delete',
    description: 'find over a broad path that deletes what it finds',
    pattern: rx(`\\bfind\\s+${ROOT_PATH}\\s${REST}(?:-delete\\b|-exec\\s+rm\\b)`),
  },
  {
    id: 'make_filesystem',
    description: 'formatting a filesystem (mkfs, mke2fs, mkswap, wipefs)',
    pattern: /\b(?:mkfs(?:\.[a-z0-9]+)?|mke2fs|mkswap|wipefs)\b/,
  },
  {
    id: 'write_device',
    description: 'writing to a disk device (dd of=/dev/…, > /dev/sdX)',
    pattern:
      /\bdd\b[^;&|\n]*\bof=\/dev\/(?!null\b|zero\b|stdout\b|stderr\b|tty\b)|>\s*\/dev\/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|md|dm-)/,
  },
  {
    id: 'recursive_permissions_root',
    description: 'chmod/chown/chgrp -R on / or a system folder',
    pattern: rx(
      `\\b(?:chmod|chown|chgrp)\\s+(?:${REST}\\s)?${RECURSIVE_FLAG}\\b${REST}\\s\\/(?:(?:${SYSTEM_DIRECTORIES})\\/?)?\\*?${END}`,
    ),
  },
  {
    id: 'pipe_to_shell',
    description: 'running a downloaded script (curl | sh, wget | bash, sh <(curl …))',
    pattern:
      /\b(?:curl|wget)\b[^;&\n]*\|\s*(?:sudo\s+)?(?:env\s+)?(?:ba|z|da|k|fi)?sh\b|\b(?:ba|z|da|k)?sh\s+(?:-c\s+)?(?:<\(|\$\()\s*(?:curl|wget)\b/,
  },
  { id: 'fork_bomb', description: 'a fork bomb', pattern: /([\w:.]+)\s*\(\)\s*\{\s*\1\s*\|\s*\1\s*&\s*\}/ },
  {
    id: 'power',
    description: 'shutting down or rebooting the machine',
    pattern: rx(
      `${AT_COMMAND}(?:shutdown|reboot|halt|poweroff|systemctl\\s+(?:poweroff|reboot|halt|kexec)|init\\s+[06])\\b`,
    ),
  },
  {
    id: 'kill_all',
    description: 'killing every process (kill -1)',
    pattern: /\bkill\s+(?:-(?:9|kill|s\s+kill|term)\s+)?-1\b/,
  },
  {
    id: 'sql_destroy',
    description: 'destroying SQL data (DROP TABLE/DATABASE, TRUNCATE TABLE, DELETE without WHERE)',
    pattern: /\bdrop\s+(?:table|database|schema|view|index)\b|\btruncate\s+table\b|\bdelete\s+from\s+[\w."]+\s*(?:;|$)/,
  },
  {
    id: 'write_etc',
    description: 'writing to /etc (redirection, tee, cp/mv/install into it, sed -i)',
    pattern:
      /(?:>>?|>\|)\s*\/etc\/|\btee\s+(?:-[a-z]+\s+)*\/etc\/|\b(?:cp|mv|install|ln)\s[^;&|\n]*\s\/etc(?:\/\S*)?\s*(?:$|[;&|])|\bsed\s+(?:[^;&|\n]*\s)?-i\S*\s[^;&|\n]*\/etc\//,
  },
];

/** Lower case, one space for any run of whitespace, quotes and backslash escapes removed. */
export function normalizeCommand(command: string): string {
  return command
    .toLowerCase()
    .replace(/\\\n/g, ' ')
    .replace(/["'\\]/g, '')
    .replace(/[ \t\r\f\v]+/g, ' ')
    .replace(/ ?\n ?/g, '\n')
    .trim();
}

/** Every pattern the command matches (an empty list for a harmless one). */
export function findDangerous(command: string): DangerousPattern[] {
  const normalized = normalizeCommand(command);
  return DANGEROUS_PATTERNS.filter((entry) => entry.pattern.test(normalized));
}
