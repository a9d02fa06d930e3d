import assert from 'node:assert/strict';
import { get } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { echoScript, startScriptedServer } from '../../src/testing/index.js';
import { startViewer } from '../../src/view/index.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';
import { prompts, scriptedBatchArgs, writeJsonl } from '../helpers/batch-run.js';

function fetchText(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    get(url, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve(body));
    }).on('error', reject);
  });
}

test('a batch run\'s page is headed with its prompt count, not its built-in environment ("prompts 1" for 12 prompts)', async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(echoScript);
  t.after(() => server.close());
  const dataset = join(directory, 'prompts.jsonl');
  writeJsonl(dataset, prompts(12));
  const batch = await runCli(scriptedBatchArgs(dataset, 'twelve', server.url, 'NO_KEY', ['--toolsets', 'file']), {
    cwd: directory,
  });
  assert.equal(batch.code, 0, batch.stderr);
  const viewer = await startViewer({
    stores: [],
    checkpointsDir: join(directory, 'checkpoints'),
    sessionsPath: join(directory, 'home', 'sessions.sqlite'),
    host: '127.0.0.1',
    port: 0,
  });
  t.after(() => viewer.close());
  const page = await fetchText(new URL('/runs/twelve', viewer.url).href);
  assert.equal(/<h1>twelve <small>(.*?)<\/small><\/h1>/.exec(page)?.[1], 'batch · traj-scripted · 12 prompts');
});
