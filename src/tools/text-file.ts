import type { Sandbox } from '../sandbox/sandbox.js';
import { ToolFailure } from './tool-failure.js';
import { inSandbox } from './sandbox-failure.js';

/** Bytes inspected for a NUL byte, the same test git and grep use to call a file binary. */
const BINARY_SNIFF_BYTES = 8_192;

export function looksBinary(data: Buffer): boolean {
  return data.subarray(0, BINARY_SNIFF_BYTES).includes(0);
}

/** A sandbox file as text, or a ToolFailure when it is missing, outside the workdir or binary. */
export async function readTextFile(sandbox: Sandbox, path: string): Promise<string> {
  const data = await inSandbox(() => sandbox.readFile(path));
  if (looksBinary(data)) {
    throw new ToolFailure(
      `'${path}' is a binary file (${data.length} bytes); this tool works on text files only`,
      `inspect it with terminal instead, e.g. \`file ${path}\` or \`xxd ${path} | head\``,
    );
  }
  return data.toString('utf8');
}

/** 1-based line number of a character offset. */
export function lineAt(text: string, index: number): number {
  let line = 1;
  for (
    let position = text.indexOf('\n');
    position !== -1 && position < index;
    position = text.indexOf('\n', position + 1)
  )
    line++;
  return line;
}
