import assert from 'node:assert/strict';
import { test } from 'node:test';
import { extractFinalNumber, sameNumber } from '../../src/eval/final-number.js';
import { finalAnswer, taskPrompt } from '../../src/eval/transcript.js';

test('the final number tolerates commas, $, a trailing .0 and prose', () => {
  const cases: [string, string | undefined][] = [
    ['#### 18', '18'],
    ['She makes 9 * 2 = $18 every day.\n#### 18', '18'],
    ['The answer is 18.', '18'],
    ['The answer is $1,080.', '1080'],
    ['So the total is 70000.0', '70000'],
    ['First 3 apples, then 4 more: 7', '7'],
    ['Thus \\boxed{42} is the result, not 41', '42'],
    ['answer: -5 degrees', '-5'],
    ['It costs $0.50 each', '0.5'],
    ['I cannot tell.', undefined],
  ];
  for (const [text, expected] of cases) assert.equal(extractFinalNumber(text), expected, text);
});

test('a marker wins over later numbers; comparison is numeric', () => {
  assert.equal(extractFinalNumber('#### 12\nchecked with 3 other ways'), '12');
  assert.ok(sameNumber('The answer is 1,234.00', '#### 1234'));
  assert.ok(!sameNumber('The answer is 1,235', '#### 1234'));
  assert.ok(!sameNumber('no number', 'no reference'));
});

test('final answer and task prompt come from the transcript', () => {
  const messages = [
    { role: 'system' as const, content: 'sys' },
    { role: 'user' as const, content: 'task text' },
    { role: 'assistant' as const, content: 'The answer is 5' },
    { role: 'user' as const, content: 'grace prompt' },
    { role: 'assistant' as const, content: '  ' },
  ];
  assert.equal(finalAnswer(messages), 'The answer is 5');
  assert.equal(taskPrompt(messages), 'task text');
  assert.equal(finalAnswer([]), '');
});
