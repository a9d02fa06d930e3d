// `npm start`, `npm test` and `npm run bench` build first, but only when something the build
// reads changed since the last build: a current dist/ starts at once (tsc takes 15-50 s on a
// 2-core machine). The stamp is written after a build that succeeded.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const INPUTS = ['src', 'tests', 'benchmarks', 'scripts', 'tsconfig.json', 'package.json', 'package-lock.json'];

/** The newest modification time (ms) under `paths`, or 0 when none exists. */
export function newestInput(paths) {
  let newest = 0;
  for (const path of paths) {
    if (!existsSync(path)) continue;
    const info = statSync(path);
    if (!info.isDirectory()) newest = Math.max(newest, info.mtimeMs);
    else
      for (const entry of readdirSync(path, { withFileTypes: true, recursive: true }))
        if (entry.isFile())
          newest = Math.max(newest, statSync(join(entry.parentPath ?? entry.path, entry.name)).mtimeMs);
  }
  return newest;
}

/** Whether a build is due: no stamp, or an input newer than it. */
export function buildIsDue(inputs, stamp) {
  return !existsSync(stamp) || newestInput(inputs) > statSync(stamp).mtimeMs;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const stamp = join(root, 'dist', '.built');
  if (
    buildIsDue(
      INPUTS.map((input) => join(root, input)),
      stamp,
    )
  ) {
    process.stderr.write('build: sources changed since the last build, compiling (tsc)…\n');
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
    writeFileSync(stamp, `${new Date().toISOString()}\n`);
  }
}
