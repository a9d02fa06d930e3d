import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startScriptedServer, type Script } from '../../src/testing/index.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';

/** Reads README.md, then answers with what the tool returned. */
const readReadme: Script = (request, { turn }) => {
  if (turn === 0) return { tool_calls: [{ name: 'read_file', arguments: { path: 'README.md' } }] };
  const result = request.messages.findLast((message) => message.role === 'tool');
  return { content: `Summary of what I read: ${String(result?.content)}` };
};

const endpoint = (url: string) => ['--base-url', url, '--model', 'scripted', '--api-key-env', 'NO_KEY'];

test('traj ask "Summarise README.md" --toolsets file reads the README of the current folder, as the README shows', async (t) => {
  const project = temporaryDirectory(t);
  writeFileSync(join(project, 'README.md'), '# Zebra project\nThe zebra counts stripes.\n');
  const server = await startScriptedServer(readReadme);
  t.after(() => server.close());
  const result = await runCli(['ask', 'Summarise README.md', '--toolsets', 'file', ...endpoint(server.url)], {
    cwd: project,
  });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /\[assistant\] Summary of what I read:[\s\S]*The zebra counts stripes/);
  assert.ok(existsSync(join(project, 'README.md')), 'the folder is left in place');
});

test('traj ask --workdir DIR works in that folder from anywhere; --scratch gets an empty one', async (t) => {
  const project = temporaryDirectory(t);
  const elsewhere = temporaryDirectory(t);
  writeFileSync(join(project, 'README.md'), 'okapi notes\n');
  const server = await startScriptedServer(readReadme);
  t.after(() => server.close());
  const there = await runCli(
    ['ask', 'Summarise README.md', '--toolsets', 'file', '--workdir', project, ...endpoint(server.url)],
    { cwd: elsewhere },
  );
  assert.equal(there.code, 0, there.stderr);
  assert.match(there.stdout, /okapi notes/);
  const scratch = await runCli(
    ['ask', 'Summarise README.md', '--toolsets', 'file', '--scratch', ...endpoint(server.url)],
    { cwd: project },
  );
  assert.doesNotMatch(scratch.stdout, /okapi notes/);
  assert.match(scratch.stdout, /no such file/);
  const calls = server.requests.length;
  const missing = await runCli(['ask', 'x', '--workdir', join(elsewhere, 'nope'), ...endpoint(server.url)], {
    cwd: elsewhere,
  });
  assert.equal(missing.code, 2, 'a usage error');
  assert.match(missing.stderr, /--workdir .*nope: no such folder/);
  assert.equal(server.requests.length, calls, 'refused before any model call');
});

test('traj ask on a real folder refuses a dangerous command: the files survive and the model reads why', async (t) => {
  const project = temporaryDirectory(t);
  mkdirSync(join(project, 'data'));
  writeFileSync(join(project, 'data', 'keep.txt'), 'precious\n');
  const script: Script = (request, { turn }) =>
    turn === 0
      ? { tool_calls: [{ name: 'terminal', arguments: { command: 'rm -rf *' } }] }
      : { content: `tool said: ${String(request.messages.at(-1)?.content)}` };
  const server = await startScriptedServer(script);
  t.after(() => server.close());
  const home = temporaryDirectory(t);
  const result = await runCli(['ask', 'clean up', '--toolsets', 'terminal', ...endpoint(server.url)], {
    cwd: project,
    env: { TRAJ_HOME: home },
  });
  assert.equal(result.code, 0, result.stderr);
  assert.ok(existsSync(join(project, 'data', 'keep.txt')), 'rm -rf never ran');
  assert.match(result.stdout, /denied this command/);
});
