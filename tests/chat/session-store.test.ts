import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import {
  cutAfterTurn,
  emptySessionUsage,
  loadApprovedCommands,
  saveApprovedCommand,
  SessionStore,
  toFtsQuery,
} from '../../src/chat/index.js';
import type { Message } from '../../src/model/messages.js';
import { temporaryDirectory } from '../helpers/cli.js';

const conversation: Message[] = [
  { role: 'system', content: 'You are a test.' },
  { role: 'user', content: 'count the penguins in zoo.txt' },
  {
    role: 'assistant',
    content: null,
    reasoning: 'I should grep for them.',
    tool_calls: [
      {
        id: 'c1',
        type: 'function',
        function: { name: 'terminal', arguments: '{"command":"grep -c penguin zoo.txt"}' },
      },
    ],
  },
  { role: 'tool', tool_call_id: 'c1', name: 'terminal', content: '{"exit_code":0,"output":"7\\n"}' },
  { role: 'assistant', content: 'There are 7 penguins.' },
];

function openStore(t: { after(fn: () => void): void }): SessionStore {
  const store = SessionStore.open(join(temporaryDirectory(t), 'sessions.sqlite'));
  t.after(() => store.close());
  return store;
}

function createSession(store: SessionStore, id: string): void {
  store.create({
    id,
    title: null,
    model: 'm',
    base_url: 'http://127.0.0.1:1/v1',
    toolsets: ['terminal'],
    tools: [],
    sandbox: 'local',
    forked_from: null,
    usage: emptySessionUsage(),
  });
}

test('FTS5 is compiled in, and search finds user text, reasoning, tool calls and results', (t) => {
  const store = openStore(t);
  createSession(store, 's1');
  store.replaceMessages('s1', conversation);
  assert.equal(store.db.prepare("SELECT sqlite_compileoption_used('ENABLE_FTS5')").pluck().get() as number, 1);
  assert.deepEqual(
    store
      .search('penguins')
      .map((hit) => hit.position)
      .sort(),
    [1, 4],
  );
  assert.deepEqual(
    store
      .search('grep')
      .map((hit) => hit.position)
      .sort(),
    [2],
  );
  assert.deepEqual(
    store.search('exit_code').map((hit) => hit.position),
    [3],
  );
  assert.deepEqual(
    store
      .search('penguin*')
      .map((hit) => hit.position)
      .sort(),
    [1, 2, 4],
  );
  assert.deepEqual(
    store.search('"7 penguins"').map((hit) => hit.position),
    [4],
  );
  assert.equal(store.search('You are a test').length, 0, 'the system prompt is not indexed');
  assert.match(store.search('zoo')[0]!.snippet, /\[zoo\]/);
  assert.deepEqual(store.search('AND OR ( "'), [], 'FTS syntax in a query is never an error');
});

test('replaceMessages rewrites only the tail and the index follows', (t) => {
  const store = openStore(t);
  createSession(store, 's1');
  assert.deepEqual(store.replaceMessages('s1', conversation), { kept: 0, removed: 0, added: 5 });
  const retried: Message[] = [...conversation.slice(0, 4), { role: 'assistant', content: 'Seven walruses.' }];
  assert.deepEqual(store.replaceMessages('s1', retried), { kept: 4, removed: 1, added: 1 });
  assert.deepEqual(
    store.search('penguins').map((hit) => hit.position),
    [1],
  );
  assert.equal(store.search('walruses').length, 1);
  assert.deepEqual(store.replaceMessages('s1', conversation.slice(0, 1)), { kept: 1, removed: 4, added: 0 });
  assert.equal(store.search('walruses').length, 0);
  assert.deepEqual(store.get('s1').messages, conversation.slice(0, 1));
});

test('ids resolve by unique prefix; list shows the first user message', (t) => {
  const store = openStore(t);
  createSession(store, '20250101-000000-aaaaaa');
  createSession(store, '20250101-000000-bbbbbb');
  store.replaceMessages('20250101-000000-bbbbbb', conversation);
  assert.equal(store.resolveId('20250101-000000-b'), '20250101-000000-bbbbbb');
  assert.throws(() => store.resolveId('20250101'), /ambiguous/);
  assert.throws(() => store.resolveId('nope'), /no chat session 'nope'/);
  const listed = store.list();
  assert.equal(listed.find((session) => session.id.endsWith('bbbbbb'))!.preview, 'count the penguins in zoo.txt');
  assert.equal(listed.find((session) => session.id.endsWith('bbbbbb'))!.message_count, 5);
});

test('toFtsQuery quotes words and keeps phrases and prefixes', () => {
  assert.equal(toFtsQuery('hello world'), '"hello" "world"');
  assert.equal(toFtsQuery('"exact phrase" pre*'), '"exact phrase" "pre"*');
  assert.equal(toFtsQuery('exit_code:1'), '"exit_code 1"');
  assert.equal(toFtsQuery('*** ()'), undefined);
});

test('cutAfterTurn keeps turn T and all the tool results answering it', () => {
  const call = (id: string) => ({
    id,
    type: 'function' as const,
    function: { name: 'terminal', arguments: '{"command":"true"}' },
  });
  const parallel: Message[] = [
    ...conversation.slice(0, 2),
    { role: 'assistant', content: null, tool_calls: [call('a'), call('b')] },
    { role: 'tool', tool_call_id: 'a', content: 'A' },
    { role: 'tool', tool_call_id: 'b', content: 'B' },
    { role: 'user', content: 'You have used all available turns.' },
    { role: 'assistant', content: 'done' },
  ];
  assert.deepEqual(cutAfterTurn(parallel, 0), parallel.slice(0, 2));
  assert.deepEqual(cutAfterTurn(parallel, 1), parallel.slice(0, 5), 'both results, not the user message after them');
  assert.deepEqual(cutAfterTurn(parallel, 2), parallel);
  assert.deepEqual(cutAfterTurn(conversation, 1), conversation.slice(0, 4));
  assert.throws(() => cutAfterTurn(conversation, 3), /has 2 assistant turns \(give 0\.\.2\)/);
});

test('"always" approvals are added to config.yaml without disturbing other keys or comments', (t) => {
  const file = join(temporaryDirectory(t), 'config.yaml');
  assert.deepEqual(loadApprovedCommands(file), []);
  writeFileSync(file, '# my settings\nmcp_servers:\n  files:\n    type: stdio\n    command: npx\n');
  saveApprovedCommand('recursive_delete', file);
  saveApprovedCommand('power', file);
  saveApprovedCommand('power', file);
  const text = readFileSync(file, 'utf8');
  assert.match(text, /^# my settings/);
  assert.deepEqual(parse(text), {
    mcp_servers: { files: { type: 'stdio', command: 'npx' } },
    approved_commands: ['recursive_delete', 'power'],
  });
  assert.deepEqual(loadApprovedCommands(file), ['recursive_delete', 'power']);
  writeFileSync(file, 'approved_commands: rm\n');
  assert.throws(() => loadApprovedCommands(file), /approved_commands: expected a list of pattern ids/);
  writeFileSync(file, 'approved_commands: [\n');
  assert.throws(() => loadApprovedCommands(file), /config\.yaml:\d+:\d+: YAML syntax error/);
});
