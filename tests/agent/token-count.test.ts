import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CHARS_PER_TOKEN, estimateToolTokens } from '../../src/agent/token-count.js';
import { loadToolRegistry } from '../../src/tools/builtin.js';
import { toolSpec } from '../../src/tools/tool-spec.js';

const specs = (await loadToolRegistry()).all().map((tool) => toolSpec(tool));
const estimateOfWholeJson = (list: typeof specs) => Math.ceil(JSON.stringify(list).length / CHARS_PER_TOKEN);

test('the tool estimate is the JSON of the specs, whichever specs and however often it is asked', () => {
  assert.ok(specs.length > 5);
  assert.equal(estimateToolTokens(specs), estimateOfWholeJson(specs));
  assert.equal(estimateToolTokens(specs), estimateOfWholeJson(specs), 'the second time, from remembered lengths');
  const some = [specs[3]!, specs[0]!];
  assert.equal(estimateToolTokens(some), estimateOfWholeJson(some));
  assert.equal(estimateToolTokens([specs[1]!]), estimateOfWholeJson([specs[1]!]));
  assert.equal(estimateToolTokens([]), 0);
  assert.equal(estimateToolTokens(undefined), 0);
});

test('a tokenizer of its own counts the whole JSON of the specs', () => {
  const seen: string[] = [];
  const tokens = estimateToolTokens(specs.slice(0, 2), (text) => {
    seen.push(text);
    return 7;
  });
  assert.equal(tokens, 7);
  assert.deepEqual(seen, [JSON.stringify(specs.slice(0, 2))]);
});
