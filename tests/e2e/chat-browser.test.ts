import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { callTool, reply, startScriptedServer, type ChatRequest } from '../../src/testing/index.js';
import { findChromium, PROFILE_PREFIX, processesUsing } from '../../src/tools/index.js';
import { startBrowserSite } from '../helpers/browser-site.js';
import { CLI, cliEnvironment, startCli, temporaryDirectory } from '../helpers/cli.js';

const skip = findChromium() ? false : 'skipped: no chromium on PATH (apt-get install chromium)';
const tmuxMissing = spawnSync('tmux', ['-V']).status !== 0;

/** The ref on the snapshot line matching `pattern` (the model reads refs from the snapshot). */
function refOf(snapshot: string, pattern: RegExp): string {
  const line = snapshot.split('\n').find((candidate) => pattern.test(candidate)) ?? '';
  return /\[ref=((?:f\d+)?e\d+)\]/.exec(line)?.[1] ?? 'missing';
}

/** Open the login page, type the user name, type the password, press Enter, then say where it landed. */
function signInScript(site: string) {
  return (request: ChatRequest) => {
    const lastUser = request.messages.findLastIndex((message) => message.role === 'user');
    const results = request.messages
      .slice(lastUser)
      .filter((message) => message.role === 'tool')
      .map((message) => String(message.content));
    const latest = results.at(-1) ?? '';
    switch (results.length) {
      case 0:
        return callTool('browser_navigate', { url: `${site}/login` });
      case 1:
        return callTool('browser_type', { ref: refOf(latest, /textbox "User name"/), text: 'ada' });
      case 2:
        return callTool('browser_type', { ref: refOf(latest, /textbox "Password"/), text: 'secret' });
      case 3:
        // Hermes' browser_type has no submit: Enter in the focused field sends the form.
        return callTool('browser_press', { key: 'Enter' });
      default:
        return reply(`Landed on: ${/heading "([^"]+)"/.exec(latest)?.[1] ?? latest.slice(0, 200)}`);
    }
  };
}

function chatConfig(directory: string): string {
  const config = join(directory, 'chat.yaml');
  writeFileSync(config, stringify({ web: { allow_private: true } }));
  return config;
}

function leftovers(pid: number): { folders: string[]; processes: number[] } {
  const prefix = `${PROFILE_PREFIX}${pid}-`;
  return {
    folders: readdirSync(tmpdir()).filter((name) => name.startsWith(prefix)),
    processes: processesUsing(join(tmpdir(), prefix)),
  };
}

test('traj chat --toolsets browser (piped): signs in through a form, /tools lists the browser tools, no chromium left', {
  skip,
}, async (t) => {
  const directory = temporaryDirectory(t);
  const site = await startBrowserSite();
  t.after(() => site.close());
  const server = await startScriptedServer(signInScript(site.url));
  t.after(() => server.close());
  const args = [
    'chat',
    '--config',
    chatConfig(directory),
    '--base-url',
    server.url,
    '--model',
    'scripted-chat',
    '--api-key-env',
    'NO_KEY',
    '--toolsets',
    'browser',
  ];
  const chat = startCli(args, { env: { TRAJ_HOME: join(directory, 'home') }, stdin: 'sign in as ada\n/tools\n' });
  const result = await chat.done;
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /⚙ browser_navigate/);
  assert.match(result.stdout, /⚙ browser_type/);
  assert.match(result.stdout, /^Landed on: Welcome, ada$/m);
  assert.match(result.stdout, /^ {2}browser_snapshot +\[browser\]/m);
  assert.deepEqual(
    server.requests[0]!.tools!.map((tool) => tool.function.name),
    [
      'browser_navigate',
      'browser_snapshot',
      'browser_click',
      'browser_type',
      'browser_press',
      'browser_scroll',
      'browser_back',
      'browser_get_images',
      'browser_vision',
      'browser_console',
      'browser_close',
    ],
  );
  assert.deepEqual(
    site.hits.filter((path) => path === '/session' || path === '/account'),
    ['/session', '/account'],
  );
  assert.deepEqual(leftovers(chat.child.pid!), { folders: [], processes: [] });
});

test('traj chat --toolsets browser in a real terminal (tmux): a browsing turn, then /quit leaves no chromium', {
  skip: skip || (tmuxMissing ? 'tmux is not installed' : false),
}, async (t) => {
  const directory = temporaryDirectory(t);
  const site = await startBrowserSite();
  t.after(() => site.close());
  const server = await startScriptedServer(signInScript(site.url));
  t.after(() => server.close());
  const socketDirectory = mkdtempSync(join(tmpdir(), 'traj-tmux-'));
  const environment = cliEnvironment({ TRAJ_HOME: join(directory, 'home'), TMUX: undefined });
  const tmux = (...args: string[]) =>
    execFileSync('tmux', ['-S', join(socketDirectory, 'socket'), ...args], { encoding: 'utf8', env: environment });
  t.after(() => {
    try {
      tmux('kill-server');
    } catch {
      // already gone
    }
    rmSync(socketDirectory, { recursive: true, force: true });
  });
  const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
  const args = [
    'chat',
    '--config',
    chatConfig(directory),
    '--base-url',
    server.url,
    '--model',
    'scripted-tty',
    '--api-key-env',
    'NO_KEY',
    '--toolsets',
    'browser',
  ];
  tmux(
    'new-session',
    '-d',
    '-x',
    '160',
    '-y',
    '50',
    `${[process.execPath, CLI, ...args].map(quote).join(' ')}; echo CHAT-EXITED-$?; sleep 60`,
  );
  const pane = () => tmux('capture-pane', '-p', '-S', '-200');
  const waitFor = async (what: string, predicate: (text: string) => boolean) => {
    const started = Date.now();
    for (;;) {
      const text = pane();
      if (predicate(text)) return text;
      if (Date.now() - started > 30_000) assert.fail(`timed out waiting for ${what}; the pane shows:\n${text}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  await waitFor('the prompt', (text) => /^›\s*$/m.test(text));
  const shell = tmux('display-message', '-p', '#{pane_pid}').trim();
  const chatPid = Number(execFileSync('pgrep', ['-P', shell], { encoding: 'utf8' }).trim().split('\n')[0]);
  tmux('send-keys', 'sign in as ada', 'Enter');
  await waitFor('the answer', (text) => text.includes('Landed on: Welcome, ada'));
  assert.ok(leftovers(chatPid).processes.length > 0, 'the chat runs its browser');
  tmux('send-keys', '/quit', 'Enter');
  await waitFor('the chat to exit', (text) => text.includes('CHAT-EXITED-0'));
  assert.deepEqual(leftovers(chatPid), { folders: [], processes: [] });
});
