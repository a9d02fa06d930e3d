import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { SUMMARY_MARKER } from '../../src/agent/compression.js';
import { SUMMARIZER_PROMPT } from '../../src/agent/summarizer.js';
import {
  callTool,
  callTools,
  reply,
  startScriptedServer,
  type ChatRequest,
  type ScriptedResponse,
} from '../../src/testing/index.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';
import { requireDockerOrSkip } from '../helpers/docker.js';

const endpoint = (url: string) => ['--base-url', url, '--model', 'scripted-chat', '--api-key-env', 'NO_KEY'];
const lastUser = (request: ChatRequest) =>
  String(request.messages.filter((message) => message.role === 'user').at(-1)?.content ?? '');

/** Per user message: the tool calls of its first turn, then a one-word answer. */
function byMessage(plan: Record<string, ScriptedResponse>) {
  return (request: ChatRequest): ScriptedResponse => {
    const system = String(request.messages[0]?.content ?? '');
    if (system.startsWith(SUMMARIZER_PROMPT.slice(0, 40))) return reply('Summary: files a and b were written.');
    const user = lastUser(request);
    if (request.messages.at(-1)?.role === 'tool' || !plan[user]) return reply(`done: ${user}`);
    return plan[user]!;
  };
}

test('/rollback lists a checkpoint per message and puts the files back as they were before message N', async (t) => {
  const directory = temporaryDirectory(t);
  const work = join(directory, 'work');
  mkdirSync(work);
  writeFileSync(join(work, 'kept.txt'), 'there from the start\n');
  const server = await startScriptedServer(
    byMessage({
      'make a': callTool('write_file', { path: 'a.txt', content: 'one\n' }),
      'make c': callTool('write_file', { path: 'c.txt', content: 'see\n' }),
      'change things': callTools([
        { name: 'patch', arguments: { mode: 'replace', path: 'a.txt', old_string: 'one', new_string: 'two' } },
        { name: 'terminal', arguments: { command: 'mkdir -p sub && echo made > sub/b.txt && rm kept.txt' } },
      ]),
    }),
  );
  t.after(() => server.close());
  const run = (stdin: string) =>
    runCli(['chat', ...endpoint(server.url), '--toolsets', 'terminal,file', '--workdir', work], {
      env: { TRAJ_HOME: join(directory, 'home') },
      stdin,
    });
  const first = await run('make a\nchange things\n/rollback\n/rollback 2\n');
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /^ {2}1\. before "make a"\n {2}2\. before "change things"$/m);
  assert.match(first.stdout, /workspace restored to before message 2 \("change things"\)/);
  assert.equal(readFileSync(join(work, 'a.txt'), 'utf8'), 'one\n', 'the patch is undone');
  assert.equal(existsSync(join(work, 'sub')), false, 'what the terminal made is gone');
  assert.equal(readFileSync(join(work, 'kept.txt'), 'utf8'), 'there from the start\n', 'what it removed is back');
  // A new chat starts its own checkpoints from the folder as it finds it.
  const second = await run('make c\n/rollback 1\n/rollback 3\n/rollback x\n');
  assert.equal(second.code, 0, second.stderr);
  assert.equal(existsSync(join(work, 'c.txt')), false, 'before message 1 there was no c.txt');
  assert.equal(readFileSync(join(work, 'a.txt'), 'utf8'), 'one\n');
  assert.equal(readFileSync(join(work, 'kept.txt'), 'utf8'), 'there from the start\n');
  assert.match(second.stdout, /rollback failed: no checkpoint 3: there are 1/);
  assert.match(second.stdout, /usage: \/rollback \[N\], N from 1 to 1/);
});

test('/context shows the window use; /compress summarises now and the next request carries the summary', async (t) => {
  const directory = temporaryDirectory(t);
  const long = 'x'.repeat(4_000);
  const server = await startScriptedServer((request) => {
    const system = String(request.messages[0]?.content ?? '');
    if (system.startsWith(SUMMARIZER_PROMPT.slice(0, 40))) return reply('Summary: three long answers were given.');
    return reply(`${lastUser(request)}: ${long}`);
  });
  t.after(() => server.close());
  const result = await runCli(['chat', ...endpoint(server.url), '--toolsets', 'file'], {
    env: { TRAJ_HOME: join(directory, 'home') },
    stdin: '/compress\none\ntwo\nthree\n/context\n/compress\n/context\nfour\n',
  });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /nothing to compress: the conversation is too short/);
  const uses = [...result.stdout.matchAll(/^context: ~(\d+) of 128000 tokens \((\d+\.\d)%\)$/gm)];
  assert.equal(uses.length, 2, result.stdout);
  const [before, after] = uses.map((match) => Number(match[1]));
  assert.ok(before! > 3_000, `three 4,000-character answers count, got ${before}`);
  assert.ok(after! < before! - 1_000, `compression shrank the request: ${before} → ${after}`);
  assert.match(
    result.stdout,
    /^ {2}7 messages, 7 sent after 0 compression\(s\); compresses at 80% \(compression\.threshold\)$/m,
  );
  assert.match(result.stdout, /^compressed messages 3-\d into a summary: ~\d+ → ~\d+ tokens/m);
  const summaries = server.requests.filter((request) =>
    String(request.messages[0]?.content).startsWith(SUMMARIZER_PROMPT.slice(0, 40)),
  );
  assert.equal(summaries.length, 1, 'one summary call, made by /compress');
  const four = server.requests.find((request) => lastUser(request) === 'four')!;
  const summary = four.messages.find((message) => String(message.content).startsWith(SUMMARY_MARKER));
  assert.match(String(summary?.content), /Summary: three long answers were given\./);
  assert.ok(four.messages.length < 9, 'the replaced messages are not sent');
});

test('--fork and /fork rebuild the rollout files from its write_file and patch calls, and say what they cannot', async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer((request) => {
    const results = request.messages.filter((message) => message.role === 'tool').length;
    if (request.model === 'scripted-batch') {
      if (results === 0) return callTool('write_file', { path: 'notes/plan.md', content: 'step one\nstep two\n' });
      if (results === 1)
        return callTools([
          { name: 'patch', arguments: { mode: 'replace', path: 'notes/plan.md', old_string: 'two', new_string: '2' } },
          { name: 'terminal', arguments: { command: 'echo side > side.txt' } },
        ]);
      if (results === 3) return callTool('write_file', { path: 'late.txt', content: 'after turn 2\n' });
      return reply('all done');
    }
    return reply(`chat: ${lastUser(request)}`);
  });
  t.after(() => server.close());
  writeFileSync(join(directory, 'prompts.jsonl'), `${JSON.stringify({ id: 'plan-1', prompt: 'write a plan' })}\n`);
  const batch = await runCli(
    ['batch', '--dataset', 'prompts.jsonl', '--run', 'files', '--toolsets', 'terminal,file', '--workers', '1'].concat([
      '--base-url',
      server.url,
      '--model',
      'scripted-batch',
      '--api-key-env',
      'NO_KEY',
    ]),
    { cwd: directory },
  );
  assert.equal(batch.code, 0, batch.stderr);
  const work = join(directory, 'work');
  mkdirSync(work);
  const forked = await runCli(['chat', ...endpoint(server.url), '--workdir', work, '--fork', 'files', 'plan-1', '2'], {
    cwd: directory,
    env: { TRAJ_HOME: join(directory, 'home') },
    stdin: 'hello\n',
  });
  assert.equal(forked.code, 0, forked.stderr);
  assert.equal(readFileSync(join(work, 'notes/plan.md'), 'utf8'), 'step one\nstep 2\n');
  assert.equal(existsSync(join(work, 'late.txt')), false, 'calls after the fork turn are not replayed');
  assert.equal(existsSync(join(work, 'side.txt')), false, 'terminal effects are not guessed');
  assert.match(forked.stdout, /restored the rollout's files from its 2 write_file\/patch calls: notes\/plan\.md/);
  assert.match(forked.stdout, /not restored: what 1 terminal call\(s\) did to files/);
  // /fork inside a chat, of the whole rollout: the later write is there too.
  const other = join(directory, 'other');
  mkdirSync(other);
  const sliced = await runCli(['chat', ...endpoint(server.url), '--workdir', other, '--toolsets', 'file'], {
    cwd: directory,
    env: { TRAJ_HOME: join(directory, 'home') },
    stdin: '/fork files plan-1\n',
  });
  assert.equal(sliced.code, 0, sliced.stderr);
  assert.equal(readFileSync(join(other, 'late.txt'), 'utf8'), 'after turn 2\n');
  assert.match(sliced.stdout, /from its 3 write_file\/patch calls: notes\/plan\.md, late\.txt/);
});

test('a rollback config example: /rollback and /compress are in /help', async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(() => reply('hi'));
  t.after(() => server.close());
  writeFileSync(join(directory, 'chat.yaml'), stringify({ compression: { enabled: false } }));
  const result = await runCli(
    ['chat', ...endpoint(server.url), '--toolsets', 'file', '--config', join(directory, 'chat.yaml')],
    { env: { TRAJ_HOME: join(directory, 'home') }, stdin: '/help\nhello\n/context\n' },
  );
  assert.equal(result.code, 0, result.stderr);
  for (const name of ['rollback [N]', 'compress', 'context'])
    assert.match(result.stdout, new RegExp(`/${name.replace(/[[\]]/g, '\\$&')}`));
  assert.match(result.stdout, /automatic compression is off \(compression\.enabled: false\); \/compress still works/);
});

test('/rollback in the Docker sandbox: a file written after the checkpoint is gone', async (t) => {
  if (!(await requireDockerOrSkip(t))) return;
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(
    byMessage({
      make: callTool('write_file', { path: 'made.txt', content: 'x\n' }),
      look: callTool('terminal', { command: 'ls -A' }),
    }),
  );
  t.after(() => server.close());
  const result = await runCli(['chat', ...endpoint(server.url), '--toolsets', 'terminal,file', '--sandbox', 'docker'], {
    env: { TRAJ_HOME: join(directory, 'home') },
    stdin: 'look\nmake\nlook\n/rollback 2\nlook\n',
  });
  assert.equal(result.code, 0, result.stderr);
  const listings = server.requests
    .filter((request) => request.messages.at(-1)?.role === 'tool' && lastUser(request) === 'look')
    .map((request) => JSON.parse(String(request.messages.at(-1)!.content)).output);
  assert.deepEqual(listings, ['', 'made.txt\n', ''], 'before, after the write, after /rollback 2');
  assert.match(result.stdout, /workspace restored to before message 2 \("make"\)/);
});
