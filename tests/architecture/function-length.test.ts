import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { projectRoot } from '../../src/util/paths.js';
import { sourceFiles } from './source-imports.js';

/** Past this a function no longer reads on one screen: split it (the team's style rule). */
const MOST_LINES = 80;

/** Every function, method, arrow or constructor with a body, and its length in lines (its inner functions included). */
export function longFunctions(file: string, text: string, most = MOST_LINES): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const lineOf = (position: number) => source.getLineAndCharacterOfPosition(position).line + 1;
  const visit = (node: ts.Node) => {
    const isFunction =
      ts.isFunctionDeclaration(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isArrowFunction(node) ||
      ts.isFunctionExpression(node) ||
      ts.isConstructorDeclaration(node);
    if (isFunction && node.body) {
      const first = lineOf(node.getStart(source));
      const lines = lineOf(node.end) - first + 1;
      if (lines > most) found.push(`${file}:${first}: ${lines} lines`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

test(`no function in src/ is over ${MOST_LINES} lines`, () => {
  const root = join(projectRoot(), 'src');
  const long = sourceFiles(root).flatMap((file) => longFunctions(relative(root, file), readFileSync(file, 'utf8')));
  assert.deepEqual(long, []);
});

test('the length check counts an arrow function and a method', () => {
  const body = (name: string) => `${name} {\n${'  x();\n'.repeat(5)}}\n`;
  const text = `${body('const f = () =>')}class A {\n${body('  m()')}}\n`;
  assert.deepEqual(longFunctions('a.ts', text, 4), ['a.ts:1: 7 lines', 'a.ts:9: 7 lines']);
});
