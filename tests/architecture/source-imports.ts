import { readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** Shared by the architecture tests: the TypeScript files under a folder and their relative imports. */
export interface ImportLine {
  file: string;
  line: number;
  target: string;
}

export function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Static `from '…'`, side-effect `import '…'` and dynamic `import('…')` of relative paths. */
export function relativeImports(file: string, text: string): ImportLine[] {
  const found: ImportLine[] = [];
  const pattern = /(?:\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm;
  for (const match of text.matchAll(pattern)) {
    const line = text.slice(0, match.index).split('\n').length;
    found.push({ file, line, target: resolve(dirname(file), match[1]!) });
  }
  return found;
}
