import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { projectRoot } from '../../src/util/paths.js';
import { relativeImports, sourceFiles } from './source-imports.js';

/** The file import graph of src/, type-only imports included: a type-only circle is still one concept split badly. */
function importGraph(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(root)) {
    const targets = relativeImports(file, readFileSync(file, 'utf8')).map((entry) =>
      entry.target.replace(/\.js$/, '.ts'),
    );
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** Strongly connected components of more than one file (Tarjan's algorithm), each a circle. */
export function importCircles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (node: string) => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) circles.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return circles;
}

test('no import circles in src/, type-only imports included', () => {
  const root = join(projectRoot(), 'src');
  const circles = importCircles(importGraph(root)).map((circle) =>
    circle.map((file) => relative(root, file)).join(' ↔ '),
  );
  assert.deepEqual(circles, []);
});

test('the circle check finds a two-file and a three-file circle, and no false one', () => {
  const graph = new Map([
    ['a', ['b']],
    ['b', ['a']],
    ['c', ['d']],
    ['d', ['e']],
    ['e', ['c']],
    ['f', ['a']],
  ]);
  assert.deepEqual(importCircles(graph), [
    ['a', 'b'],
    ['c', 'd', 'e'],
  ]);
});
