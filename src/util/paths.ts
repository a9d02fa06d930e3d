import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

let cachedRoot: string | undefined;

/**
 * The traj checkout or installed package root: the nearest folder above this file holding a
 * package.json named "traj". Works from `dist/src/` and from `dist/tests/` alike.
 */
export function projectRoot(): string {
  if (cachedRoot) return cachedRoot;
  let directory = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(directory, 'package.json');
    if (existsSync(candidate) && /"name"\s*:\s*"traj"/.test(readFileSync(candidate, 'utf8').slice(0, 400))) {
      cachedRoot = directory;
      return directory;
    }
    const parent = dirname(directory);
    if (parent === directory) throw new Error('traj: cannot find the project root (package.json named "traj")');
    directory = parent;
  }
}

/** `../shared` beside the checkout, where third-party task data lives (never copied in). */
export function sharedDir(): string {
  return resolve(projectRoot(), '..', 'shared');
}

/** The folder holding compiled JavaScript of this build (`dist/` or a `.build/<name>/` out dir). */
export function buildRoot(): string {
  // This file compiles to <build>/src/util/paths.js.
  return resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
}

/** TRAJ_HOME (default ~/.traj): user config and chat sessions. */
export function trajHome(): string {
  const home = process.env.TRAJ_HOME;
  if (home) return resolve(home);
  return join(process.env.HOME ?? process.cwd(), '.traj');
}
