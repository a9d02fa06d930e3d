import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { SessionStore } from '../../src/chat/session-store.js';
import { createEchoScript, startScriptedServer } from '../../src/testing/index.js';
import { startCli, temporaryDirectory } from '../helpers/cli.js';

const MESSAGES_PER_CHAT = 100;

interface Row {
  session_id: string;
  role: string;
  text: string;
}

test('two traj chat processes on one TRAJ_HOME: every message and every answer is stored, no "database is locked"', async (t) => {
  const home = join(temporaryDirectory(t), 'home');
  const server = await startScriptedServer(createEchoScript());
  t.after(() => server.close());
  const lines = (chat: string) =>
    Array.from({ length: MESSAGES_PER_CHAT }, (_, index) => `${chat} message ${index}`).join('\n');
  // Both start at once, so both create the store and write their sessions at the same time.
  const chats = ['alpha', 'beta'].map((chat) =>
    startCli(
      ['chat', '--base-url', server.url, '--model', 'scripted-chat', '--api-key-env', 'NO_KEY', '--toolsets', 'todo'],
      {
        env: { TRAJ_HOME: home },
        stdin: `${lines(chat)}\n`,
      },
    ),
  );
  const results = await Promise.all(chats.map((chat) => chat.done));
  for (const result of results) {
    assert.equal(result.code, 0, result.stderr);
    assert.doesNotMatch(result.stdout + result.stderr, /database is locked|SQLITE_BUSY/i);
  }

  const db = new Database(join(home, 'sessions.sqlite'), { readonly: true });
  t.after(() => db.close());
  assert.equal(db.prepare('SELECT COUNT(*) FROM sessions').pluck().get(), 2, 'one session per chat');
  const rows = db.prepare('SELECT session_id, role, text FROM messages ORDER BY session_id, position').all() as Row[];
  for (const chat of ['alpha', 'beta']) {
    const sessionIds = new Set(
      rows.filter((row) => row.role === 'user' && row.text.startsWith(`${chat} `)).map((row) => row.session_id),
    );
    assert.equal(sessionIds.size, 1, `${chat}'s messages are in one session`);
    const session = rows.filter((row) => row.session_id === [...sessionIds][0]);
    const users = session.filter((row) => row.role === 'user').map((row) => row.text);
    assert.deepEqual(
      users,
      Array.from({ length: MESSAGES_PER_CHAT }, (_, index) => `${chat} message ${index}`),
      `every ${chat} message stored, in order`,
    );
    const answers = session.filter((row) => row.role === 'assistant');
    assert.equal(answers.length, MESSAGES_PER_CHAT, `an answer to every ${chat} message`);
    answers.forEach((answer, index) => assert.match(answer.text, new RegExp(`You wrote: "${chat} message ${index}"`)));
  }
  // The full-text index kept step with the rows (its triggers ran in the same transactions).
  assert.equal(
    db.prepare("SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH 'alpha'").pluck().get(),
    2 * MESSAGES_PER_CHAT,
  );
  assert.equal(
    db.prepare("SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH 'beta'").pluck().get(),
    2 * MESSAGES_PER_CHAT,
  );
  assert.equal(server.requests.length, 2 * MESSAGES_PER_CHAT);
});

test('a chat waits while another process holds the write lock, then stores its messages', async (t) => {
  const home = join(temporaryDirectory(t), 'home');
  const server = await startScriptedServer(createEchoScript());
  t.after(() => server.close());
  const holder = SessionStore.open(join(home, 'sessions.sqlite'));
  t.after(() => holder.close());
  holder.db.exec('BEGIN IMMEDIATE');
  const { done } = startCli(
    ['chat', '--base-url', server.url, '--model', 'scripted-chat', '--api-key-env', 'NO_KEY', '--toolsets', 'todo'],
    {
      env: { TRAJ_HOME: home },
      stdin: 'first while locked\nsecond while locked\n',
    },
  );
  // Hold the lock for a while (well within the busy timeout) after the chat started: its first
  // writes must wait for it rather than fail.
  let exited = false;
  void done.then(() => (exited = true));
  await new Promise((resolve) => setTimeout(resolve, 1500));
  assert.equal(exited, false, 'the chat waits for the lock');
  holder.db.exec('COMMIT');
  const result = await done;
  assert.equal(result.code, 0, result.stderr);
  assert.doesNotMatch(result.stdout + result.stderr, /database is locked|error:/);
  const texts = holder.db
    .prepare("SELECT text FROM messages WHERE role IN ('user', 'assistant') ORDER BY position")
    .pluck()
    .all() as string[];
  assert.equal(texts.length, 4);
  assert.deepEqual(
    texts.filter((_, index) => index % 2 === 0),
    ['first while locked', 'second while locked'],
  );
});
