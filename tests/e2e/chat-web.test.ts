import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { callTool, reply, startScriptedServer, type ChatRequest } from '../../src/testing/index.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';
import { startWebStandIn } from '../helpers/web-stand-in.js';

test('traj chat --toolsets web searches through the configured backend, and /tools lists the web tools', async (t) => {
  const directory = temporaryDirectory(t);
  const site = await startWebStandIn();
  t.after(() => site.close());
  const server = await startScriptedServer((request: ChatRequest) => {
    const result = request.messages.findLast((message) => message.role === 'tool');
    if (request.messages.at(-1)?.role === 'tool')
      return reply(`First hit: ${JSON.parse(String(result!.content)).results[0].title}`);
    return callTool('web_search', { query: 'bay of fundy tides' });
  });
  t.after(() => server.close());
  const result = await runCli(
    ['chat', '--base-url', server.url, '--model', 'scripted-chat', '--api-key-env', 'NO_KEY', '--toolsets', 'web'],
    {
      env: { TRAJ_HOME: join(directory, 'home'), TRAJ_SEARXNG_URL: `${site.url}/searxng` },
      stdin: 'what are the tides like?\n/tools\n',
    },
  );
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /⚙ web_search/);
  assert.match(result.stdout, /^First hit: Tidal Power in the Bay of Fundy$/m);
  assert.match(result.stdout, /^ {2}web_search +\[web\] Search the web for information\./m);
  assert.match(result.stdout, /^ {2}web_extract +\[web\] Extract content from web page URLs\./m);
  assert.deepEqual(
    server.requests[0]!.tools!.map((tool) => tool.function.name),
    ['web_search', 'web_extract'],
  );
  assert.equal(site.searches.length, 1);
});

test('traj chat --toolsets web without a search backend says why web_search is missing; web_extract still works', async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(() => reply('no tools needed'));
  t.after(() => server.close());
  const result = await runCli(
    [
      'chat',
      '--base-url',
      server.url,
      '--model',
      'scripted-chat',
      '--api-key-env',
      'NO_KEY',
      '--toolsets',
      'web,terminal',
    ],
    {
      env: { TRAJ_HOME: join(directory, 'home') },
      stdin: 'hello\n/tools\n',
    },
  );
  assert.equal(result.code, 0, result.stderr);
  assert.match(
    result.stdout,
    /^web_search \[web\] is not offered: no search backend configured: set TRAJ_SEARXNG_URL/m,
  );
  assert.doesNotMatch(result.stdout, /^ {2}web_search +\[web\]/m);
  assert.match(result.stdout, /^ {2}web_extract +\[web\]/m);
  assert.deepEqual(
    server.requests[0]!.tools!.map((tool) => tool.function.name),
    ['terminal', 'process', 'web_extract'],
  );
});
