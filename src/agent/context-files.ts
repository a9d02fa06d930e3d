import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { injectionReason } from '../tools/memory/injection.js';

/** File names read as project instructions, in each folder from the repository root down to the working directory. */
export const CONTEXT_FILE_NAMES = ['AGENTS.md', '.traj.md'] as const;
/** Total characters of context files in the system prompt; each file's share is cut in the middle beyond it. */
export const CONTEXT_FILES_MAX_CHARS = 20_000;

export interface ContextFile {
  path: string;
  text: string;
}

/**
 * AGENTS.md and .traj.md from the working directory up to the repository root (the nearest folder
 * with a .git), outermost first so nearer instructions come last. Without a repository, only
 * the working directory's own files.
 */
export function discoverContextFiles(workingDirectory: string): ContextFile[] {
  const folders: string[] = [];
  let folder = workingDirectory;
  for (;;) {
    folders.unshift(folder);
    if (existsSync(join(folder, '.git'))) break;
    const parent = dirname(folder);
    if (parent === folder) return readAll([workingDirectory]);
    folder = parent;
  }
  return readAll(folders);
}

function readAll(folders: string[]): ContextFile[] {
  const files: ContextFile[] = [];
  for (const folder of folders) {
    for (const name of CONTEXT_FILE_NAMES) {
      const path = join(folder, name);
      if (existsSync(path) && statSync(path).isFile()) files.push({ path, text: readFileSync(path, 'utf8') });
    }
  }
  return files;
}

/** The system-prompt section: each file under its path relative to the working directory, size-capped. */
export function contextFilesSection(
  files: readonly ContextFile[],
  workingDirectory: string,
  maxChars = CONTEXT_FILES_MAX_CHARS,
): string {
  if (files.length === 0) return '';
  const share = Math.floor(maxChars / files.length);
  const parts = files.map((file) => {
    const name = relative(workingDirectory, file.path) || file.path;
    const reason = injectionReason(file.text);
    if (reason) return `## ${name}\n(left out: it ${reason})`;
    const text = file.text.trim();
    const body =
      text.length <= share
        ? text
        : `${text.slice(0, share / 2)}\n…[${text.length - share} characters cut]…\n${text.slice(-share / 2)}`;
    return `## ${name}\n${body}`;
  });
  return `# Project instructions (context files)\n${parts.join('\n\n')}`;
}
