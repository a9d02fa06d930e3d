import { z } from 'zod';
import { defineTool } from './tool.js';
import { ToolFailure } from './tool-failure.js';
import { readTextFile } from './text-file.js';

export const READ_FILE_DEFAULT_LIMIT = 500;
export const READ_FILE_MAX_LIMIT = 2_000;
/** Longer lines (minified code, data blobs) are cut so one line cannot flood the context. */
export const READ_FILE_MAX_LINE_CHARS = 2_000;

export const ReadFileParameters = z.object({
  path: z.string().describe('Path to the file to read (absolute, relative, or ~/path)'),
  offset: z.number().int().min(1).default(1).describe('Line number to start reading from (1-indexed, default: 1)'),
  limit: z
    .number()
    .int()
    .max(READ_FILE_MAX_LIMIT)
    .default(READ_FILE_DEFAULT_LIMIT)
    .describe('Maximum number of lines to read (default: 500, max: 2000)'),
});

function numbered(line: string, number: number): string {
  const cut =
    line.length > READ_FILE_MAX_LINE_CHARS
      ? `${line.slice(0, READ_FILE_MAX_LINE_CHARS)} [... ${line.length - READ_FILE_MAX_LINE_CHARS} more characters on this line]`
      : line;
  return `${number}|${cut}`;
}

export const readFileTool = defineTool({
  name: 'read_file',
  toolset: 'file',
  confinesOwnPaths: true,
  version: '2',
  // Hermes' words, as hermes-agent sends them (tests/fixtures/hermes/tool-schemas.json).
  description:
    "Read a text file with line numbers and pagination. Use this instead of cat/head/tail in terminal. Output format: 'LINE_NUM|CONTENT'. Suggests similar filenames if not found. Use offset and limit for large files. Reads exceeding ~100K characters are truncated on a line boundary and return a next_offset; continue with offset to read the rest. Jupyter notebooks (.ipynb), Word documents (.docx), and Excel workbooks (.xlsx) are auto-extracted to readable text. NOTE: Cannot read images or other binary files — use vision_analyze for images.",
  parameters: ReadFileParameters,
  run: async ({ path, offset, limit }, { sandbox }) => {
    if (path === '') throw new ToolFailure('path is empty', 'name the file to read');
    if (limit < 1) throw new ToolFailure(`limit ${limit} reads no line`, 'use a limit between 1 and 2000');
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
