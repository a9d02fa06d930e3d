import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ConfigError } from '../../src/errors.js';
import { loadScriptFile } from '../../src/testing/index.js';
import { scratchFiles } from '../helpers/config-files.js';

const { folder, write } = scratchFiles('traj-script-file-');

const context = (index: number) => ({ index, turn: 0 });

test('a YAML list is validated and answered in order', async () => {
  const file = write(
    'two-turns.yaml',
    [
      '- tool_calls:',
      '    - name: terminal',
      '      arguments: {command: "ls"}',
      '- fault: http',
      '  status: 429',
      '  headers: {retry-after: "1"}',
      '- fault: delay',
      '  ms: 10',
      '  then: {content: "done"}',
    ].join('\n'),
  );
  const script = await loadScriptFile(file);
  assert.ok(Array.isArray(script));
  assert.equal(script.length, 3);
  assert.deepEqual(script[1], { fault: 'http', status: 429, headers: { 'retry-after': '1' } });
});

test('a JSON object with cycle: true answers round and round', async () => {
  const file = write('cycle.json', JSON.stringify({ cycle: true, responses: [{ content: 'a' }, { content: 'b' }] }));
  const script = await loadScriptFile(file);
  assert.equal(typeof script, 'function');
  if (typeof script !== 'function') return;
  const request = { messages: [] };
  assert.deepEqual(
    [0, 1, 2].map((index) => script(request, context(index))),
    [{ content: 'a' }, { content: 'b' }, { content: 'a' }],
  );
});

test('a bad entry is a ConfigError naming the file, the entry and the field', async () => {
  const file = write('bad.yaml', '- content: fine\n- fault: http\n  status: "soon"\n- tool_calls: [{arguments: {}}]\n');
  await assert.rejects(loadScriptFile(file), (error: unknown) => {
    assert.ok(error instanceof ConfigError);
    assert.match(error.message, /bad\.yaml: 1\.status/);
    assert.match(error.message, /bad\.yaml: 2\.tool_calls\.0\.name/);
    return true;
  });
  const typo = write('typo.json', '[{"contnet": "x"}]');
  await assert.rejects(loadScriptFile(typo), /typo\.json: 0\.contnet: unknown key \(did you mean 'content'\?\)/);
  const syntax = write('syntax.yaml', '- content: [unclosed\n');
  await assert.rejects(loadScriptFile(syntax), /syntax\.yaml:\d+:\d+: YAML syntax error/);
  await assert.rejects(loadScriptFile(join(folder, 'missing.yaml')), /missing\.yaml: cannot read the file/);
  await assert.rejects(loadScriptFile(write('script.txt', '')), /must be \.json, \.yaml, \.yml, \.js or \.mjs/);
});

test('a .mjs module exporting a function is the script', async () => {
  const file = write(
    'by-turn.mjs',
    'export default (request, context) => ({ content: `turn ${context.turn} of ${request.messages.length}` });\n',
  );
  const script = await loadScriptFile(file);
  assert.equal(typeof script, 'function');
  if (typeof script !== 'function') return;
  assert.deepEqual(await script({ messages: [{ role: 'user' }] }, { index: 0, turn: 0 }), { content: 'turn 0 of 1' });
  const wrong = write('wrong.mjs', 'export const script = 1;\n');
  await assert.rejects(loadScriptFile(wrong), /default export must be a script function/);
});
