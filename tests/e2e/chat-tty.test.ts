import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { callTool, conversationScript, reply, startScriptedServer } from '../../src/testing/index.js';
import { CLI, cliEnvironment, temporaryDirectory } from '../helpers/cli.js';

const tmuxMissing = spawnSync('tmux', ['-V']).status !== 0;
const WAIT_LIMIT_MS = 20_000;

function quote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

test('in a real terminal: streamed reasoning is dimmed, the approval prompt asks, Ctrl-C interrupts a long tool call and the chat goes on', {
  skip: tmuxMissing ? 'tmux is not installed (CI installs it): the pseudo-terminal test needs it' : false,
}, async (t) => {
  const directory = temporaryDirectory(t);
  const home = join(directory, 'home');
  const server = await startScriptedServer(
    conversationScript([
      reply('Hello! This answer streams in pieces.', { reasoning_content: 'The user greets me; I greet back.' }),
      // Matches the recursive-delete pattern, but `cd` into a folder that does not exist stops it even if it ran.
      callTool('terminal', { command: 'cd /nonexistent-traj-test-folder && rm -rf *' }),
      reply('Understood, nothing deleted.'),
      callTool('terminal', { command: 'sleep 30' }),
      reply('Yes, still here.'),
    ]),
  );
  t.after(() => server.close());

  // A private tmux server on a socket of its own: nothing else's sessions are touched.
  const socketDirectory = mkdtempSync(join(tmpdir(), 'traj-tmux-'));
  const environment = cliEnvironment({ TRAJ_HOME: home, NO_COLOR: undefined, TMUX: undefined });
  const tmux = (...args: string[]) =>
    execFileSync('tmux', ['-S', join(socketDirectory, 'socket'), ...args], { encoding: 'utf8', env: environment });
  t.after(() => {
    try {
      tmux('kill-server');
    } catch {
      // The server is already gone.
    }
    rmSync(socketDirectory, { recursive: true, force: true });
  });
  const chat = [
    process.execPath,
    CLI,
    'chat',
    '--base-url',
    server.url,
    '--model',
    'scripted-tty',
    '--api-key-env',
    'NO_KEY',
    '--toolsets',
    'terminal',
  ]
    .map(quote)
    .join(' ');
  // The pane stays open after the chat exits, showing its exit status.
  tmux('new-session', '-d', '-x', '200', '-y', '50', `${chat}; echo CHAT-EXITED-$?; sleep 60`);

  const pane = (escapes = false) => tmux('capture-pane', '-p', ...(escapes ? ['-e'] : []), '-S', '-200');
  const waitFor = async (what: string, predicate: (text: string) => boolean) => {
    const started = Date.now();
    for (;;) {
      const text = pane();
      if (predicate(text)) return text;
      if (Date.now() - started > WAIT_LIMIT_MS) assert.fail(`timed out waiting for ${what}; the pane shows:\n${text}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const promptCount = (text: string) => text.split('\n').filter((line) => line.startsWith('›')).length;

  await waitFor('the prompt', (text) => /^›\s*$/m.test(text));
  assert.match(pane(), /dangerous commands ask first/);

  tmux('send-keys', '/he', 'Tab');
  await waitFor('tab completion of /help', (text) => /^› \/help/m.test(text));
  tmux('send-keys', 'C-u');

  tmux('send-keys', 'hello', 'Enter');
  await waitFor('the streamed answer', (text) => text.includes('Hello! This answer streams in pieces.'));
  assert.match(pane(true), /\x1b\[2m\(thinking\) The user greets me; I greet back\./, 'reasoning is shown dimmed');
  assert.equal(server.requests[0]!.stream, true);

  tmux('send-keys', 'delete stuff', 'Enter');
  await waitFor('the approval prompt', (text) => text.includes('allow? [o]nce / [s]ession / [a]lways / [d]eny:'));
  assert.match(pane(), /⚠ dangerous command — recursive delete of a broad path/);
  tmux('send-keys', 'd', 'Enter');
  await waitFor(
    'the denial and the answer',
    (text) => text.includes('denied: the command was not run') && text.includes('Understood, nothing deleted.'),
  );

  tmux('send-keys', 'wait a bit', 'Enter');
  await waitFor('the long tool call to start', (text) => text.includes('⚙ terminal  $ sleep 30'));
  const promptsBefore = promptCount(pane());
  tmux('send-keys', 'C-c');
  const interrupted = await waitFor(
    'the interrupt and the prompt again',
    (text) => text.includes('[interrupted]') && promptCount(text) > promptsBefore,
  );
  assert.match(interrupted, /✗ terminal {2}\d+ ms {2}\[interrupted\]/);
  assert.doesNotMatch(interrupted, /CHAT-EXITED/, 'Ctrl-C during a turn does not quit');

  tmux('send-keys', 'still there?', 'Enter');
  await waitFor('the next answer', (text) => text.includes('Yes, still here.'));
  const afterInterrupt = server.requests[4]!.messages;
  assert.equal(afterInterrupt.at(-1)!.content, 'still there?');
  assert.match(String(afterInterrupt.at(-2)!.content), /\[interrupted\]/, 'the model saw the interrupted result');

  tmux('send-keys', 'C-c');
  await waitFor('the quit hint', (text) => text.includes('(Ctrl-C again to quit'));
  tmux('send-keys', 'C-c');
  await waitFor('the chat to exit', (text) => text.includes('CHAT-EXITED-0'));

  const db = new Database(join(home, 'sessions.sqlite'), { readonly: true });
  const roles = db.prepare('SELECT role FROM messages ORDER BY position').pluck().all() as string[];
  db.close();
  assert.deepEqual(roles, [
    'system',
    'user',
    'assistant',
    'user',
    'assistant',
    'tool',
    'assistant',
    'user',
    'assistant',
    'tool',
    'user',
    'assistant',
  ]);
});
