import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { outputMatches, shellExamples } from '../helpers/doc-blocks.js';

const fence = '```';

describe("the doc-test's reading of a page", () => {
  test('sh blocks are examples; a text block right after one is its output; other blocks are not run', () => {
    const page = [
      '# Page',
      `${fence}sh`,
      'traj ask hi',
      fence,
      '',
      `${fence}text`,
      'answer',
      fence,
      `${fence}bash`,
      'not run',
      fence,
      `${fence}text`,
      'not an output',
      fence,
      '<!-- doc-test: exit 2 -->',
      `${fence}sh`,
      'traj bacth',
      fence,
      'prose between',
      `${fence}text`,
      'not its output: prose came first',
      fence,
    ].join('\n');
    const examples = shellExamples('p.md', page);
    assert.equal(examples.length, 2);
    assert.deepEqual(
      examples.map((example) => [example.line, example.script, example.expectedOutput, example.expectedExit]),
      [
        [2, 'traj ask hi\n', 'answer', 0],
        [16, 'traj bacth\n', undefined, 2],
      ],
    );
  });

  test('a skip needs a reason, and an unreadable directive is an error naming the line', () => {
    const skipped = shellExamples('p.md', `<!-- doc-test: skip needs a GPU -->\n${fence}sh\nx\n${fence}\n`);
    assert.equal(skipped[0]!.skip, 'needs a GPU');
    assert.throws(
      () => shellExamples('p.md', `<!-- doc-test: skip -->\n${fence}sh\nx\n${fence}\n`),
      /p\.md:1: a skipped example must say why/,
    );
    assert.throws(
      () => shellExamples('p.md', `<!-- doc-test: sikp why -->\n${fence}sh\nx\n${fence}\n`),
      /p\.md:1: unreadable doc-test directive/,
    );
  });
});

describe('expected output', () => {
  test('lines must match exactly, but for trailing spaces and surrounding blank lines', () => {
    assert.ok(outputMatches('a\nb', '\na  \nb\n\n'));
    assert.ok(!outputMatches('a\nb', 'a\nc'));
    assert.ok(!outputMatches('a\nb', 'a\nb\nc'), 'an extra line is a difference');
    assert.ok(!outputMatches('a\nb\nc', 'a\nb'), 'a missing line is a difference');
  });

  test('"..." alone on a line matches any number of lines, none included', () => {
    assert.ok(outputMatches('a\n...\nz', 'a\nz'));
    assert.ok(outputMatches('a\n...\nz', 'a\nb\nc\nz'));
    assert.ok(outputMatches('...\nz', 'x\ny\nz'));
    assert.ok(!outputMatches('a\n...\nz', 'a\nb\nc'));
  });

  test('"…" inside a line matches any characters on that line only', () => {
    assert.ok(outputMatches('took … s (ok)', 'took 1.25 s (ok)'));
    assert.ok(outputMatches('[traj] run …', '[traj] run x: y'));
    assert.ok(!outputMatches('took … s (ok)', 'took 1.25 s (failed)'));
    assert.ok(!outputMatches('a…b', 'a\nb'), 'it never spans lines');
    assert.ok(outputMatches('x (y) [z] $1.*', 'x (y) [z] $1.*'), 'other characters are literal');
    assert.ok(!outputMatches('x.y', 'xzy'));
  });
});
