// `npm run docs:reference`: write docs/reference.md from the code (src/cli/reference.ts, built in dist/).
// `--check` writes nothing and exits 1 when the committed page differs (tests/docs/reference.test.ts
// runs the same comparison in `npm test`).
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const page = join(root, 'docs', 'reference.md');
const { renderReference } = await import(pathToFileURL(join(root, 'dist', 'src', 'cli', 'reference.js')).href);
const text = await renderReference();
if (process.argv.includes('--check')) {
  if (readFileSync(page, 'utf8') !== text) {
    process.stderr.write('docs/reference.md differs from the code: run npm run docs:reference and commit it\n');
    process.exit(1);
  }
} else {
  writeFileSync(page, text);
  process.stderr.write('wrote docs/reference.md\n');
}
