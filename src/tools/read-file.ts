import { z } from 'zod';
import { defineTool, ToolFailure } from './registry.js';
import { readTextFile } from './text-file.js';

export const READ_FILE_DEFAULT_LIMIT = 500;
export const READ_FILE_MAX_LIMIT = 2_000;
/** Longer lines (minified code, data blobs) are cut so one line cannot flood the context. */
export const READ_FILE_MAX_LINE_CHARS = 2_000;

export const ReadFileParameters = z.object({
  path: z.string().min(1).describe('File to read, relative to the working directory or absolute inside it.'),
  offset: z.number().int().min(1).default(1).describe('First line to show, counting from 1 (default 1).'),
  limit: z
    .number()
    .int()
    .min(1)
    .max(READ_FILE_MAX_LIMIT)
    .default(READ_FILE_DEFAULT_LIMIT)
    .describe(`How many lines to show (default ${READ_FILE_DEFAULT_LIMIT}, at most ${READ_FILE_MAX_LIMIT}).`),
});

function numbered(line: string, number: number): string {
  const cut =
    line.length > READ_FILE_MAX_LINE_CHARS
      ? `${line.slice(0, READ_FILE_MAX_LINE_CHARS)} [... ${line.length - READ_FILE_MAX_LINE_CHARS} more characters on this line]`
      : line;
  return `${String(number).padStart(6)}\t${cut}`;
}

export const readFileTool = defineTool({
  name: 'read_file',
  toolset: 'file',
  confinesOwnPaths: true,
  version: '1',
  description:
    'Read a text file, shown as numbered lines ("     7\\tcode"; the number and tab are not part of the file). ' +
    'Use offset and limit to page through long files.',
  parameters: ReadFileParameters,
  run: async ({ path, offset, limit }, { sandbox }) => {
    const text = await readTextFile(sandbox, path);
    if (text === '') return `[${path} is empty]`;
    const lines = text.split('\n');
    if (text.endsWith('\n')) lines.pop();
    if (offset > lines.length) {
      throw new ToolFailure(
        `offset ${offset} is past the end of '${path}', which has ${lines.length} lines`,
        `use an offset between 1 and ${lines.length}`,
      );
    }
    const end = Math.min(lines.length, offset - 1 + limit);
    const shown = lines.slice(offset - 1, end).map((line, index) => numbered(line, offset + index));
    if (end < lines.length) {
      shown.push(
        `[lines ${offset}-${end} of ${lines.length}; ${lines.length - end} more — call read_file with offset ${end + 1} to continue]`,
      );
    }
    return shown.join('\n');
  },
});
