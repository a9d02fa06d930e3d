import { z } from 'zod';
import { defineTool, ToolFailure } from './registry.js';
import { inSandbox } from './sandbox-failure.js';
import { lineAt, readTextFile } from './text-file.js';

/** Lines of context shown around a change, so the model can check the result without re-reading. */
const SNIPPET_CONTEXT_LINES = 2;
const SNIPPET_MAX_LINES = 30;

export const PatchParameters = z.object({
  path: z.string().min(1).describe('File to change, relative to the working directory or absolute inside it.'),
  old_text: z
    .string()
    .min(1)
    .describe('Exact text to replace, including whitespace and indentation; it must occur exactly once in the file.'),
  new_text: z.string().describe('Text to put in its place (empty to delete old_text).'),
});

function positionsOf(text: string, needle: string): number[] {
  const positions: number[] = [];
  for (let index = text.indexOf(needle); index !== -1; index = text.indexOf(needle, index + needle.length))
    positions.push(index);
  return positions;
}

/** Where old_text would match if whitespace were ignored: the usual reason an exact match fails. */
function looseMatchLine(text: string, needle: string): number | undefined {
  const words = needle
    .trim()
    .split(/\s+/)
    .map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  if (words.length === 0 || words[0] === '') return undefined;
  const match = new RegExp(words.join('\\s+')).exec(text);
  return match ? lineAt(text, match.index) : undefined;
}

function notFound(path: string, text: string, oldText: string): ToolFailure {
  const near = looseMatchLine(text, oldText);
  const hint =
    near === undefined
      ? 'read the file with read_file and copy old_text exactly as it is there'
      : `text that differs only in whitespace or indentation is at line ${near}; read_file it and copy old_text exactly`;
  return new ToolFailure(`old_text was not found in '${path}'`, hint);
}

function snippet(text: string, firstLine: number, lastLine: number): string {
  const lines = text.split('\n');
  if (text.endsWith('\n')) lines.pop();
  const from = Math.max(1, firstLine - SNIPPET_CONTEXT_LINES);
  const to = Math.min(lines.length, lastLine + SNIPPET_CONTEXT_LINES, from + SNIPPET_MAX_LINES - 1);
  return lines
    .slice(from - 1, to)
    .map((line, index) => `${String(from + index).padStart(6)}\t${line}`)
    .join('\n');
}

export const patchTool = defineTool({
  name: 'patch',
  toolset: 'file',
  confinesOwnPaths: true,
  version: '1',
  description:
    'Replace one exact occurrence of old_text with new_text in a file. old_text must match the file exactly (whitespace included) and only once; ' +
    'add surrounding lines to make it unique. Returns the changed region with line numbers.',
  parameters: PatchParameters,
  run: async ({ path, old_text: oldText, new_text: newText }, { sandbox }) => {
    const text = await readTextFile(sandbox, path);
    const positions = positionsOf(text, oldText);
    if (positions.length === 0) throw notFound(path, text, oldText);
    if (positions.length > 1) {
      const lines = positions.map((position) => lineAt(text, position)).join(', ');
      throw new ToolFailure(
        `old_text matches ${positions.length} times in '${path}' (at lines ${lines})`,
        'include more surrounding lines in old_text so that it matches exactly once',
      );
    }
    const at = positions[0]!;
    const changed = text.slice(0, at) + newText + text.slice(at + oldText.length);
    await inSandbox(() => sandbox.writeFile(path, changed));
    const firstLine = lineAt(changed, at);
    const lastLine = lineAt(changed, at + Math.max(0, newText.length - 1));
    return {
      path,
      line: firstLine,
      lines_removed: oldText.split('\n').length,
      lines_added: newText === '' ? 0 : newText.split('\n').length,
      snippet: snippet(changed, firstLine, lastLine),
    };
  },
});
