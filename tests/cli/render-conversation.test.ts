import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderConversation } from '../../src/cli/render-conversation.js';

// `traj ask` prints this to a terminal: a reply must not retitle the window, clear the screen or
// rewrite earlier lines through escape sequences.
test('control characters from the model and tools are printed as visible escapes', () => {
  const attack = 'ok\x1b]0;pwned\x07\x1b[2J\rhidden\x9b31m';
  const text = renderConversation([
    { role: 'user', content: 'hi' },
    {
      role: 'assistant',
      content: attack,
      tool_calls: [{ id: 'c', type: 'function', function: { name: 'terminal', arguments: `{"command":"${attack}"}` } }],
    },
    { role: 'tool', tool_call_id: 'c', content: attack },
  ]);
  assert.doesNotMatch(text, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  assert.match(text, /ok\\x1b\]0;pwned\\x07\\x1b\[2J\\x0dhidden\\x9b31m/);
  assert.equal(text.split('\n').length, 4, 'newlines are kept');
});
