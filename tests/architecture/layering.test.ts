import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { projectRoot } from '../../src/util/paths.js';
import { relativeImports, sourceFiles } from './source-imports.js';

/**
 * The rooms of src/, lowest first. A file may import its own room, a room listed before it,
 * and the shared ground (errors.ts, util/). docs/ARCHITECTURE.md lists the same order.
 */
export const ROOMS = [
  'config',
  'model',
  'tokens',
  'sandbox',
  'tools',
  'agent',
  'trajectory',
  'dataset',
  'eval',
  'bridge',
  'run',
  'queue',
  'report',
  'view',
  'export',
  'serve',
  'chat',
  'cli',
] as const;

/** Imports allowed against the order, each with its reason in ARCHITECTURE. */
const EXCEPTIONS: Record<string, string[]> = {
  // `traj mock-server` and --scripted-if-unset are CLI features built on the scripted server.
  cli: ['testing'],
};
const SHARED = new Set(['errors.ts', 'util']);
// testing/ stands beside cli: it may use every room below cli, and only cli (lazily) uses it.
const TESTING_RANK = ROOMS.indexOf('cli');

function roomOf(sourceRoot: string, path: string): string | undefined {
  const inside = relative(sourceRoot, path);
  if (inside.startsWith('..')) return undefined;
  return inside.split('/')[0]!.replace(/\.js$/, '.ts');
}

function rank(room: string): number {
  return room === 'testing' ? TESTING_RANK : ROOMS.indexOf(room as (typeof ROOMS)[number]);
}

export function layeringViolations(sourceRoot: string): string[] {
  const violations: string[] = [];
  for (const file of sourceFiles(sourceRoot)) {
    const from = roomOf(sourceRoot, file)!;
    if (SHARED.has(from)) continue;
    for (const entry of relativeImports(file, readFileSync(file, 'utf8'))) {
      const to = roomOf(sourceRoot, entry.target);
      if (to === undefined || to === from || SHARED.has(to)) continue;
      if (EXCEPTIONS[from]?.includes(to)) continue;
      const allowed =
        rank(to) >= 0 && rank(from) >= 0 && rank(to) < rank(from) && !(to === 'testing' && from !== 'testing');
      if (!allowed) violations.push(`${relative(sourceRoot, file)}:${entry.line}: ${from} imports ${to}`);
    }
  }
  return violations;
}

test('every src/ room is known to the layering', () => {
  const rooms = readdirSync(join(projectRoot(), 'src'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
  const unknown = rooms.filter(
    (room) => room !== 'util' && room !== 'testing' && !ROOMS.includes(room as (typeof ROOMS)[number]),
  );
  assert.deepEqual(unknown, [], 'a new room must be placed in ROOMS (and in docs/ARCHITECTURE.md)');
});

test('no file in src/ imports a room above its own', () => {
  assert.deepEqual(layeringViolations(join(projectRoot(), 'src')), []);
});

test('the shared ground (errors.ts, util/) imports no room', () => {
  const root = join(projectRoot(), 'src');
  const shared = [join(root, 'errors.ts'), ...sourceFiles(join(root, 'util'))];
  const upward = shared.flatMap((file) =>
    relativeImports(file, readFileSync(file, 'utf8'))
      .filter((entry) => {
        const to = roomOf(root, entry.target);
        return to !== undefined && !SHARED.has(to);
      })
      .map((entry) => `${relative(root, entry.file)}:${entry.line}`),
  );
  assert.deepEqual(upward, []);
});

test('the check catches an upward import and a dynamic one', () => {
  const lines = relativeImports(
    '/x/src/model/a.ts',
    "import { a } from '../run/store.js';\nconst b = await import('../cli/main.js');\n",
  );
  assert.deepEqual(
    lines.map((entry) => entry.target),
    ['/x/src/run/store.js', '/x/src/cli/main.js'],
  );
  assert.equal(roomOf('/x/src', lines[0]!.target), 'run');
});

test('docs/ARCHITECTURE.md lists the rooms in the same order', () => {
  const text = readFileSync(join(projectRoot(), 'docs', 'ARCHITECTURE.md'), 'utf8');
  const line = text.split('\n').find((candidate) => candidate.startsWith('`config →'));
  assert.ok(line, 'ARCHITECTURE.md has a line starting with `config →');
  assert.deepEqual(
    line
      .replace(/`/g, '')
      .split('→')
      .map((room) => room.trim().replace(/,.*$/, '')),
    [...ROOMS],
  );
});
