import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EndpointSchema } from '../../src/config/endpoint.js';
import type { Message, ToolSpec } from '../../src/model/messages.js';
import { buildRequestBody, requestBodyChunks } from '../../src/model/wire.js';

type BodyArguments = Parameters<typeof requestBodyChunks>;
const requestBodyText = (...body: BodyArguments) => Buffer.concat(requestBodyChunks(...body)).toString();

const messages: Message[] = [
  { role: 'system', content: 'be brief' },
  { role: 'user', content: 'say "hi"\n\u2028 and \\ more' },
];
const terminal: ToolSpec = {
  type: 'function',
  function: { name: 'terminal', description: 'run "a" command\n', parameters: { type: 'object' } },
};
const read: ToolSpec = {
  type: 'function',
  function: { name: 'read_file', description: 'read', parameters: { type: 'object', properties: {} } },
};

function endpoint(extra: Record<string, unknown> = {}) {
  return EndpointSchema.parse({ base_url: 'http://127.0.0.1:1/v1', model: 'm', temperature: 0.2, ...extra });
}

test('the body text is the body: tools spliced in from their cached text parse back to the same request', () => {
  for (const stream of [false, true]) {
    for (const tools of [undefined, [], [terminal], [terminal, read], [read, terminal]]) {
      const expected = buildRequestBody(endpoint(), messages, tools, stream);
      // Twice: the second time the specs' text comes from the cache.
      for (let round = 0; round < 2; round++)
        assert.deepEqual(JSON.parse(requestBodyText(endpoint(), messages, tools, stream)), expected);
    }
  }
});

test("the cached tools array is the sequence's own: a prefix, a reordering or a new spec is another array", () => {
  const shell: ToolSpec = { ...terminal, function: { ...terminal.function, description: 'another terminal' } };
  const sequences = [[terminal], [terminal, read], [read, terminal], [read], [shell, read], [terminal, read, shell]];
  // Twice over: the second round reads every sequence from the cache, in another order.
  for (const round of [sequences, [...sequences].reverse()])
    for (const tools of round)
      assert.deepEqual(JSON.parse(requestBodyText(endpoint(), messages, tools, false)).tools, tools);
});

test("extra_body's tools go out only when traj offers none, as before", () => {
  const withExtra = endpoint({ extra_body: { tools: [{ type: 'function', function: { name: 'x' } }], top_k: 5 } });
  assert.deepEqual(JSON.parse(requestBodyText(withExtra, messages, [], false)).tools, [
    { type: 'function', function: { name: 'x' } },
  ]);
  const offered = JSON.parse(requestBodyText(withExtra, messages, [terminal], false));
  assert.deepEqual(offered.tools, [terminal]);
  assert.equal(offered.top_k, 5);
  // One `tools` key, not a second one after the first.
  assert.equal(requestBodyText(withExtra, messages, [terminal], false).split('"tools":').length, 2);
});
