import { ToolFailure } from './tool-failure.js';

/**
 * The V4A patch format (codex, cline, Hermes' patch mode): one patch, many files.
 *
 *     *** Begin Patch
 *     *** Update File: src/app.py
 *     @@ def main @@
 *      context line
 *     -removed line
 *     +added line
 *     *** Add File: notes.txt
 *     +first line
 *     *** Delete File: old.txt
 *     *** Move File: a.txt -> b.txt
 *     *** End Patch
 */
export type V4aOperation =
  | { kind: 'update'; path: string; moveTo?: string; hunks: V4aHunk[] }
  | { kind: 'add'; path: string; content: string }
  | { kind: 'delete'; path: string }
  | { kind: 'move'; path: string; moveTo: string };

export interface V4aHunk {
  /** The text after `@@`: a line the change comes after (a function's header, usually). */
  hint?: string;
  /** Where the hunk starts in the patch, 1-based, for error messages. */
  line: number;
  before: string[];
  after: string[];
}

const HEADER = /^\*\*\* (Update|Add|Delete) File: (.+)$/;
const MOVE = /^\*\*\* Move File: (.+?) -> (.+)$/;

/** Parse a V4A patch; a malformed one is a ToolFailure naming the patch line. */
export function parseV4a(patch: string): V4aOperation[] {
  const lines = patch.replace(/\r\n/g, '\n').split('\n');
  const operations: V4aOperation[] = [];
  let current: V4aOperation | undefined;
  let hunk: V4aHunk | undefined;
  for (const [index, line] of lines.entries()) {
    const number = index + 1;
    if (line === '*** Begin Patch' || line === '*** End of File') continue;
    if (line === '*** End Patch') break;
    const header = HEADER.exec(line);
    const move = MOVE.exec(line);
    if (header || move) {
      current = header
        ? startOperation(header[1]!, header[2]!.trim())
        : { kind: 'move', path: move![1]!.trim(), moveTo: move![2]!.trim() };
      operations.push(current);
      hunk = undefined;
      continue;
    }
    if (current?.kind === 'update' && line.startsWith('*** Move to: ')) {
      current.moveTo = line.slice('*** Move to: '.length).trim();
      continue;
    }
    if (current?.kind === 'add') {
      if (!line.startsWith('+') && line !== '')
        throw malformed(number, line, "every line of an added file starts with '+'");
      if (line !== '' || index < lines.length - 1) current.content += `${line.slice(1)}\n`;
      continue;
    }
    if (current?.kind === 'update') {
      hunk = hunkLine(current, hunk, line, number);
      continue;
    }
    if (line.trim() !== '')
      throw malformed(number, line, 'expected *** Update File:, *** Add File:, *** Delete File: or *** Move File:');
  }
  if (operations.length === 0)
    throw new ToolFailure(
      'the patch has no operations',
      'start each file with *** Update File: PATH (or Add/Delete/Move File)',
    );
  return operations;
}

function startOperation(kind: string, path: string): V4aOperation {
  if (kind === 'Update') return { kind: 'update', path, hunks: [] };
  if (kind === 'Add') return { kind: 'add', path, content: '' };
  return { kind: 'delete', path };
}

function hunkLine(operation: { hunks: V4aHunk[] }, hunk: V4aHunk | undefined, line: string, number: number): V4aHunk {
  if (line.startsWith('@@')) {
    const hint = line
      .replace(/^@@\s?/, '')
      .replace(/\s?@@$/, '')
      .trim();
    const fresh: V4aHunk = { line: number, before: [], after: [], ...(hint ? { hint } : {}) };
    operation.hunks.push(fresh);
    return fresh;
  }
  let target = hunk;
  if (!target) {
    target = { line: number, before: [], after: [] };
    operation.hunks.push(target);
  }
  const prefix = line[0] ?? ' ';
  const text = line.slice(1);
  if (prefix === ' ' || line === '') {
    target.before.push(text);
    target.after.push(text);
  } else if (prefix === '-') target.before.push(text);
  else if (prefix === '+') target.after.push(text);
  else throw malformed(number, line, "hunk lines start with ' ' (context), '-' (removed) or '+' (added)");
  return target;
}

function malformed(number: number, line: string, expected: string): ToolFailure {
  return new ToolFailure(`patch line ${number} is not V4A: ${JSON.stringify(line.slice(0, 120))}`, expected);
}

/** Line comparisons from strict to loose; the first that finds the block wins. */
const LINE_MATCHERS: ReadonlyArray<(a: string, b: string) => boolean> = [
  (a, b) => a === b,
  (a, b) => a.trimEnd() === b.trimEnd(),
  (a, b) => a.trim() === b.trim(),
  (a, b) => a.replace(/\s+/g, ' ').trim() === b.replace(/\s+/g, ' ').trim(),
];

function findBlock(lines: readonly string[], block: readonly string[], from: number): number {
  for (const same of LINE_MATCHERS) {
    for (let start = from; start + block.length <= lines.length; start++) {
      if (block.every((line, offset) => same(lines[start + offset]!, line))) return start;
    }
  }
  return -1;
}

function hintLine(lines: readonly string[], hint: string, from: number): number {
  for (const same of LINE_MATCHERS.slice(1)) {
    for (let index = from; index < lines.length; index++) if (same(lines[index]!, hint)) return index;
  }
  for (let index = from; index < lines.length; index++) if (lines[index]!.includes(hint.trim())) return index;
  return -1;
}

/** A file's text with the hunks applied in order; a hunk that does not match is a ToolFailure. */
export function applyHunks(path: string, text: string, hunks: readonly V4aHunk[]): string {
  const trailingNewline = text.endsWith('\n') || text === '';
  const lines = text === '' ? [] : text.split('\n');
  if (text.endsWith('\n')) lines.pop();
  let cursor = 0;
  for (const hunk of hunks) {
    let from = cursor;
    if (hunk.hint) {
      const at = hintLine(lines, hunk.hint, cursor);
      if (at >= 0) from = hunk.before.length === 0 ? at + 1 : at;
    }
    const start = hunk.before.length === 0 ? (hunk.hint ? from : lines.length) : findBlock(lines, hunk.before, from);
    if (start < 0) {
      throw new ToolFailure(
        `the hunk at patch line ${hunk.line} does not match '${path}'`,
        'read the file and copy its context and removed lines exactly (after the first character of each line)',
      );
    }
    lines.splice(start, hunk.before.length, ...hunk.after);
    cursor = start + hunk.after.length;
  }
  if (lines.length === 0) return '';
  return lines.join('\n') + (trailingNewline ? '\n' : '');
}
