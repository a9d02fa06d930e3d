import { z } from 'zod';
import { defineTool } from './registry.js';
import { inSandbox } from './sandbox-failure.js';

export const WriteFileParameters = z.object({
  path: z
    .string()
    .min(1)
    .describe('File to write, relative to the working directory or absolute inside it. Missing folders are created.'),
  content: z.string().describe('The complete new content of the file; an existing file is replaced.'),
});

export const writeFileTool = defineTool({
  name: 'write_file',
  toolset: 'file',
  confinesOwnPaths: true,
  version: '1',
  description:
    'Create or overwrite a text file with the given content, creating missing parent folders. To change part of a file, use patch.',
  parameters: WriteFileParameters,
  run: async ({ path, content }, { sandbox }) => {
    await inSandbox(() => sandbox.writeFile(path, content));
    return { path, bytes_written: Buffer.byteLength(content, 'utf8') };
  },
});
