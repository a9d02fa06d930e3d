import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { parse } from 'yaml';
import {
  callTool,
  conversationScript,
  createEchoScript,
  reply,
  startScriptedServer,
  type ChatRequest,
  type ScriptFunction,
} from '../../src/testing/index.js';
import type { TrajectoryRecord } from '../../src/trajectory/record.js';
import { runCli, startCli, temporaryDirectory } from '../helpers/cli.js';

function chatArgs(baseUrl: string, extra: string[] = []): string[] {
  return [
    'chat',
    '--base-url',
    baseUrl,
    '--model',
    'scripted-chat',
    '--api-key-env',
    'NO_KEY',
    '--toolsets',
    'terminal,file',
    ...extra,
  ];
}

/** A run config choosing plain processes for the local sandbox, for tests that check host-side effects. */
function plainProcessesConfig(directory: string): string {
  const path = join(directory, 'plain-processes.yaml');
  writeFileSync(path, 'local:\n  isolation: none\n');
  return path;
}

interface StoredRow {
  position: number;
  role: string;
  message: string;
}

function storedMessages(home: string, session?: string): StoredRow[] {
  const db = new Database(join(home, 'sessions.sqlite'), { readonly: true });
  try {
    const id =
      session ?? (db.prepare('SELECT id FROM sessions ORDER BY updated_at DESC LIMIT 1').pluck().get() as string);
    return db
      .prepare('SELECT position, role, message FROM messages WHERE session_id = ? ORDER BY position')
      .all(id) as StoredRow[];
  } finally {
    db.close();
  }
}

function lastUserText(request: ChatRequest): string {
  const user = request.messages.filter((message) => message.role === 'user').at(-1);
  return String(user?.content ?? '');
}

test('piped mode: a tool call is shown, runs in the sandbox, and the session is stored', async (t) => {
  const directory = temporaryDirectory(t);
  const home = join(directory, 'home');
  const made = join(directory, 'made.txt');
  const server = await startScriptedServer(
    conversationScript([
      callTool(
        'terminal',
        { command: `printf 'made by chat' > ${made} && echo wrote it` },
        { reasoning_content: 'I will write the file.' },
      ),
      reply('The file is written.'),
    ]),
  );
  t.after(() => server.close());
  // The command writes a host file outside the sandbox: only plain processes (isolation none) can.
  const result = await runCli(chatArgs(server.url, ['--config', plainProcessesConfig(directory)]), {
    env: { TRAJ_HOME: home },
    stdin: 'please write the file\n',
  });
  assert.equal(result.code, 0, result.stderr);
  assert.equal(readFileSync(made, 'utf8'), 'made by chat');
  assert.doesNotMatch(result.stdout, /\x1b\[/, 'piped output has no ANSI codes');
  assert.match(result.stdout, /^> please write the file$/m);
  assert.match(result.stdout, /^\(thinking\) I will write the file\.$/m);
  assert.match(result.stdout, /^ {2}⚙ terminal {2}\$ printf 'made by chat' > .*made\.txt && echo wrote it$/m);
  assert.match(result.stdout, /^ {2}✓ terminal {2}\d+ ms {2}exit 0 · wrote it$/m);
  assert.match(result.stdout, /^The file is written\.$/m);
  assert.equal(server.requests.length, 2);
  assert.equal(server.requests[0]!.stream, true, 'chat streams');
  assert.deepEqual(
    server.requests[0]!.tools!.map((tool) => tool.function.name),
    ['terminal', 'process', 'read_file', 'write_file', 'patch', 'search_files'],
  );
  const rows = storedMessages(home);
  assert.deepEqual(
    rows.map((row) => row.role),
    ['system', 'user', 'assistant', 'tool', 'assistant'],
  );
  assert.deepEqual(JSON.parse(rows[3]!.message).content, '{"exit_code":0,"output":"wrote it\\n"}');
});

test('piped mode: SIGINT interrupts a long tool call, the session keeps the [interrupted] result, the chat ends normally', async (t) => {
  const home = join(temporaryDirectory(t), 'home');
  const server = await startScriptedServer(conversationScript([callTool('terminal', { command: 'sleep 30' })]));
  t.after(() => server.close());
  const { child, done } = startCli(chatArgs(server.url), { env: { TRAJ_HOME: home }, stdin: 'wait for it\n' });
  let seen = '';
  await new Promise<void>((resolve) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes('⚙ terminal')) resolve();
    });
  });
  child.kill('SIGINT');
  const result = await done;
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /✗ terminal {2}\d+ ms {2}\[interrupted\]\n\[interrupted\]/);
  const rows = storedMessages(home);
  assert.deepEqual(
    rows.map((row) => row.role),
    ['system', 'user', 'assistant', 'tool'],
  );
  assert.match(JSON.parse(rows[3]!.message).content, /\[interrupted\]/);
});

test('/retry and /undo rewrite the stored session; /search finds it via FTS5; traj sessions lists, shows and exports it', async (t) => {
  const directory = temporaryDirectory(t);
  const home = join(directory, 'home');
  const script: ScriptFunction = (request, context) => reply(`answer ${context.index} about ${lastUserText(request)}`);
  const server = await startScriptedServer(script);
  t.after(() => server.close());

  const first = await runCli(chatArgs(server.url), {
    env: { TRAJ_HOME: home },
    stdin: 'tell me about xylophones\nand marimbas\n/retry\n',
  });
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /^answer 1 about and marimbas$/m);
  assert.match(first.stdout, /^retrying: and marimbas$/m);
  assert.match(first.stdout, /^answer 2 about and marimbas$/m);
  // The retried request is the history without the replaced answer.
  assert.deepEqual(
    server.requests[2]!.messages.map((message) => message.role),
    ['system', 'user', 'assistant', 'user'],
  );
  let rows = storedMessages(home);
  assert.deepEqual(
    rows.map((row) => row.role),
    ['system', 'user', 'assistant', 'user', 'assistant'],
  );
  assert.equal(JSON.parse(rows[4]!.message).content, 'answer 2 about and marimbas');
  assert.ok(!rows.some((row) => row.message.includes('answer 1')), 'the first answer is gone from the store');

  const second = await runCli(chatArgs(server.url, ['--resume', 'last']), {
    env: { TRAJ_HOME: home },
    stdin: '/undo\n/search xylophones\n/search marimbas\n',
  });
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stdout, /^removed the last exchange: and marimbas$/m);
  rows = storedMessages(home);
  assert.deepEqual(
    rows.map((row) => row.role),
    ['system', 'user', 'assistant'],
  );
  const sessionId = /^traj chat · session (\S+)$/m.exec(second.stdout)![1]!;
  assert.match(second.stdout, new RegExp(`^${sessionId} #1 user: tell me about \\[xylophones\\]$`, 'm'));
  assert.match(
    second.stdout,
    new RegExp(`^${sessionId} #2 assistant: answer 0 about tell me about \\[xylophones\\]$`, 'm'),
  );
  assert.doesNotMatch(second.stdout.split('/search marimbas')[1]!, /#\d+ /, 'after /undo nothing mentions marimbas');

  const listed = await runCli(['sessions', 'list'], { env: { TRAJ_HOME: home } });
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, new RegExp(`^${sessionId} .* scripted-chat +3 msgs {2}tell me about xylophones$`, 'm'));
  const searched = await runCli(['sessions', 'search', 'xylophone*'], { env: { TRAJ_HOME: home } });
  assert.equal(searched.code, 0, searched.stderr);
  assert.match(searched.stdout, /#1 user: tell me about \[xylophones\]/);
  const missing = await runCli(['sessions', 'search', 'bassoon'], { env: { TRAJ_HOME: home } });
  assert.equal(missing.code, 1);
  const shown = await runCli(['sessions', 'show', sessionId.slice(0, 18)], { env: { TRAJ_HOME: home } });
  assert.match(
    shown.stdout,
    /^\[user\] tell me about xylophones\n\[assistant\] answer 0 about tell me about xylophones$/m,
  );
  const exported = await runCli(['sessions', 'export', sessionId, '--format', 'sharegpt'], {
    env: { TRAJ_HOME: home },
  });
  const sharegpt = JSON.parse(exported.stdout) as { id: string; conversations: { from: string; value: string }[] };
  assert.equal(sharegpt.id, sessionId);
  assert.deepEqual(
    sharegpt.conversations.map((turn) => turn.from),
    ['system', 'human', 'gpt'],
  );
  assert.match(sharegpt.conversations[0]!.value, /<tools>\[\{"name": "terminal"/);
  assert.equal(sharegpt.conversations[2]!.value, '<think>\n</think>\nanswer 0 about tell me about xylophones');
});

test('a dangerous command is denied without approval (it does not run) and runs once approved; "always" is saved', async (t) => {
  const directory = temporaryDirectory(t);
  const home = join(directory, 'home');
  const victim = join(directory, 'victim');
  mkdirSync(victim);
  writeFileSync(join(victim, 'keep.txt'), 'precious');
  mkdirSync(home);
  writeFileSync(join(home, 'config.yaml'), '# user settings\nmcp_servers: {}\n');
  // `cd` into the test's own folder first: even a broken guard could only empty that folder.
  const command = `cd ${victim} && rm -rf *`;
  const seenAtDenial: boolean[] = [];
  const server = await startScriptedServer(
    conversationScript([
      callTool('terminal', { command }),
      () => {
        seenAtDenial.push(existsSync(join(victim, 'keep.txt')));
        return reply('The user said no.');
      },
      callTool('terminal', { command }),
      reply('Cleaned.'),
    ]),
  );
  t.after(() => server.close());

  // The approved command deletes a host folder: only plain processes (isolation none) reach it.
  const result = await runCli(chatArgs(server.url, ['--config', plainProcessesConfig(directory)]), {
    env: { TRAJ_HOME: home },
    stdin: 'clean the folder\nno\nclean it now, please\ny\n',
  });
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(seenAtDenial, [true], 'the file still existed when the model read the denial');
  const [denied, approved] = result.stdout.split('clean it now, please');
  assert.match(denied!, /⚠ dangerous command — recursive delete of a broad path/);
  assert.match(
    denied!,
    /allow\? \[o\]nce \/ \[s\]ession \/ \[a\]lways \/ \[d\]eny: no\n +denied: the command was not run/,
  );
  assert.match(denied!, /✗ terminal .*the user denied this command \(recursive delete of a broad path/);
  const denial = server.requests[1]!.messages.at(-1)!;
  assert.equal(denial.role, 'tool');
  assert.match(
    String(denial.content),
    /"error":"the user denied this command .*it was not run","hint":"do not retry it as is/,
  );
  assert.match(approved!, /allow\? .*: y\n +allowed \(this time\)/);
  assert.match(approved!, /✓ terminal .*exit 0/);
  assert.equal(existsSync(join(victim, 'keep.txt')), false, 'approved: the command ran');

  // "always": saved beside the other keys, and the next chat does not ask again.
  writeFileSync(join(victim, 'again.txt'), 'x');
  const always = await startScriptedServer(
    conversationScript([
      callTool('terminal', { command }),
      reply('ok'),
      callTool('terminal', { command }),
      reply('ok again'),
    ]),
  );
  t.after(() => always.close());
  const saved = await runCli(chatArgs(always.url, ['--config', plainProcessesConfig(directory)]), {
    env: { TRAJ_HOME: home },
    stdin: 'clean\na\n',
  });
  assert.match(saved.stdout, /allowed \(always, saved in config\.yaml\)/);
  const config = readFileSync(join(home, 'config.yaml'), 'utf8');
  assert.match(config, /^# user settings/);
  assert.deepEqual(parse(config), { mcp_servers: {}, approved_commands: ['recursive_delete'] });
  writeFileSync(join(victim, 'third.txt'), 'x');
  const later = await runCli(chatArgs(always.url, ['--resume', 'last', '--config', plainProcessesConfig(directory)]), {
    env: { TRAJ_HOME: home },
    stdin: 'clean again\n',
  });
  assert.equal(later.code, 0, later.stderr);
  assert.doesNotMatch(later.stdout, /allow\?/);
  assert.equal(existsSync(join(victim, 'third.txt')), false);
});

test('--fork and /fork restore turn T of a batch record: the next request holds exactly those messages', async (t) => {
  const directory = temporaryDirectory(t);
  const home = join(directory, 'home');
  const server = await startScriptedServer(createEchoScript({ toolTurns: 2 }));
  t.after(() => server.close());
  writeFileSync(join(directory, 'prompts.jsonl'), `${JSON.stringify({ id: 'greet-1', prompt: 'say hello twice' })}\n`);
  const batch = await runCli(
    [
      'batch',
      '--dataset',
      'prompts.jsonl',
      '--run',
      'demo',
      '--toolsets',
      'terminal,todo',
      '--base-url',
      server.url,
      '--model',
      'scripted-batch',
      '--api-key-env',
      'NO_KEY',
      '--workers',
      '1',
    ],
    { cwd: directory },
  );
  assert.equal(batch.code, 0, batch.stderr);
  const record = JSON.parse(
    readFileSync(join(directory, 'datasets', 'demo', 'trajectories.jsonl'), 'utf8'),
  ) as TrajectoryRecord;
  assert.deepEqual(
    record.messages.map((message) => message.role),
    ['system', 'user', 'assistant', 'tool', 'assistant', 'tool', 'assistant'],
  );
  // The batch's second model request is exactly the conversation after turn 1, as the model saw it.
  const afterTurnOne = server.requests[1]!;
  assert.equal(afterTurnOne.messages.length, 4);

  const before = server.requests.length;
  const forked = await runCli(chatArgs(server.url, ['--fork', 'demo', 'greet', '1']), {
    cwd: directory,
    env: { TRAJ_HOME: home },
    stdin: 'what did you find?\n',
  });
  assert.equal(forked.code, 0, forked.stderr);
  assert.match(forked.stdout, /^traj chat · session \S+ \(fork of demo greet-1 @ turn 1\/3\)$/m);
  assert.match(forked.stdout, /toolsets terminal, todo/);
  const next = server.requests[before]!;
  assert.deepEqual(next.messages, [...afterTurnOne.messages, { role: 'user', content: 'what did you find?' }]);
  assert.deepEqual(next.tools, afterTurnOne.tools, "the record's toolsets are restored");

  const db = new Database(join(home, 'sessions.sqlite'), { readonly: true });
  const session = db.prepare('SELECT forked_from, toolsets FROM sessions').get() as {
    forked_from: string;
    toolsets: string;
  };
  db.close();
  assert.deepEqual(JSON.parse(session.toolsets), ['terminal', 'todo']);
  assert.deepEqual(JSON.parse(session.forked_from), {
    run: 'demo',
    store: join(directory, 'checkpoints', 'demo.sqlite'),
    key: 'greet-1',
    sample: 0,
    turn: 1,
    turns: 3,
  });

  // /fork inside a chat, cut after turn 2 (its tool results included), then /continue without a new message.
  const afterTurnTwo = server.requests[2]!;
  const middle = server.requests.length;
  const sliced = await runCli(chatArgs(server.url), {
    cwd: directory,
    env: { TRAJ_HOME: home },
    stdin: '/fork demo greet-1:0 2\n/continue\n',
  });
  assert.equal(sliced.code, 0, sliced.stderr);
  assert.match(sliced.stdout, /forked \(fork of demo greet-1 @ turn 2\/3\)/);
  assert.deepEqual(server.requests[middle]!.messages, afterTurnTwo.messages);
  assert.deepEqual(server.requests[middle]!.tools, afterTurnTwo.tools);

  const wrongTurn = await runCli(chatArgs(server.url, ['--fork', 'demo', 'greet-1', '9']), {
    cwd: directory,
    env: { TRAJ_HOME: home },
    stdin: '',
  });
  assert.equal(wrongTurn.code, 2, 'a usage error exits 2');
  assert.match(wrongTurn.stderr, /turn 9 does not exist: the conversation has 3 assistant turns \(give 0\.\.3\)/);
  const wrongRun = await runCli(chatArgs(server.url), {
    cwd: directory,
    env: { TRAJ_HOME: home },
    stdin: '/fork nothing here\n',
  });
  assert.match(wrongRun.stdout, /error: no run store at .*nothing\.sqlite/);
});
