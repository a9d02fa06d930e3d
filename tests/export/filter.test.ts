import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileFilter } from '../../src/export/index.js';
import { recordFor } from './store-fixture.js';

const withTools = recordFor(
  { key: 'tools', toolCall: true, reasoning: true, reward: 0.75, category: 'files', group: 'g1' },
  4,
);
const plain = recordFor({ key: 'plain', finishReason: 'max_turns' }, 9);

function matches(filter: string): string[] {
  const predicate = compileFilter(filter);
  return [withTools, plain].filter((record) => predicate(record)).map((record) => record.id);
}

test('comparisons, logic and precedence', () => {
  assert.deepEqual(matches('reward >= 0.5'), ['tools']);
  assert.deepEqual(matches('reward < 0.5'), [], 'an unscored row is neither above nor below a number');
  assert.deepEqual(matches('reward == null'), ['plain']);
  assert.deepEqual(matches('reward != null'), ['tools']);
  assert.deepEqual(matches('finish_reason == "stop"'), ['tools']);
  assert.deepEqual(matches("finish_reason != 'stop'"), ['plain']);
  assert.deepEqual(
    matches('turns <= 1 or reward > 0.7 and completed'),
    ['tools', 'plain'],
    'and binds tighter than or',
  );
  assert.deepEqual(matches('(turns <= 1 or reward > 0.7) and completed'), ['tools']);
  assert.deepEqual(matches('not completed'), ['plain']);
  assert.deepEqual(matches('not not completed'), ['tools']);
  assert.deepEqual(matches('(turns) > 1'), ['tools'], 'a parenthesised value can be compared');
  assert.deepEqual(matches('sample == 0 and source.row >= -1'), ['tools', 'plain'], 'negative numbers');
});

test('paths, lists, contains, in and len', () => {
  assert.deepEqual(matches('toolsets contains "terminal"'), ['tools']);
  assert.deepEqual(
    matches('tool_stats.name contains "terminal"'),
    ['tools'],
    'a path through a list collects the field of every element',
  );
  assert.deepEqual(matches('messages.1.role == "user"'), ['tools', 'plain']);
  assert.deepEqual(matches('messages.role contains "tool"'), ['tools']);
  assert.deepEqual(matches('usage.reasoning_tokens > 0'), ['tools']);
  assert.deepEqual(matches('source.fields.category in ["files", "math"]'), ['tools']);
  assert.deepEqual(matches('source.fields.missing == null'), ['tools', 'plain'], 'a missing field is null');
  assert.deepEqual(matches('model contains "fixture"'), ['tools', 'plain'], 'substring');
  assert.deepEqual(matches('len(messages) >= 4 and len(toolsets) == 1'), ['tools']);
  assert.deepEqual(matches('len(tool_stats)'), ['tools'], 'a bare value is a truth test');
  assert.deepEqual(matches('toolsets == []'), ['plain']);
  assert.deepEqual(matches('group == "g1"'), ['tools']);
  assert.deepEqual(
    matches('source.dataset == "fixture.jsonl" and "a\\"b" == \'a"b\''),
    ['tools', 'plain'],
    'escapes in strings',
  );
  assert.deepEqual(matches('reward_error == null and scores.x == null'), ['tools', 'plain']);
});

test('errors name the position with a caret and say what was expected', () => {
  const cases: Array<[string, RegExp]> = [
    ['reward >= ', /expected a value after '>=' at position 11\n {2}reward >= \n {12}\^/],
    ['rewrd > 1', /unknown field 'rewrd' \(fields: id, sample, conversations.*\) at position 1/],
    ['turns = 3', /'=' is not an operator \(use '==' to compare\) at position 7/],
    ['finish_reason == "stop', /a string that is never closed at position 18/],
    ['(turns > 1', /expected '\)' to close the parenthesis, found the end at position 11/],
    ['turns > 1 turns', /expected 'and', 'or' or the end, found 'turns' at position 11/],
    [
      'turns > 1 and',
      /expected a field, a string, a number, true, false, null or a list, found the end at position 14/,
    ],
    ['', /an empty expression at position 1/],
    ['turns > 1 ; drop', /unexpected character ';' at position 11/],
    ['toolsets contains and', /expected a value, found the keyword 'and' at position 19/],
    ['usage. > 1', /expected a field name or an index after '\.', found '>' at position 8/],
    ['"a\\q" == id', /unknown escape '\\q' in a string at position 3/],
  ];
  for (const [filter, message] of cases) {
    assert.throws(
      () => compileFilter(filter),
      (error: Error & { code?: string }) => {
        assert.equal(error.code, 'invalid_filter', filter);
        assert.match(error.message, /^--filter: /);
        assert.match(error.message, message, filter);
        return true;
      },
    );
  }
});

test('a filter never executes code: JavaScript in it is a syntax error, not an effect', () => {
  assert.throws(() => compileFilter('process.exit(1)'), /unknown field 'process'/);
  assert.throws(() => compileFilter('id == require("fs")'), /unknown field 'require'/);
  assert.throws(() => compileFilter('constructor.constructor("return 1")()'), /unknown field 'constructor'/);
});

test('paths reach own fields only, never the prototype', () => {
  assert.deepEqual(matches('source.fields.constructor == null and source.__proto__ == null'), ['tools', 'plain']);
  assert.deepEqual(matches('len(source.fields.toString) == null'), ['tools', 'plain']);
});
