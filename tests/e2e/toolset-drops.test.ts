import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { echoScript, startScriptedServer } from '../../src/testing/index.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';
import { prompts, scriptedBatchArgs, writeJsonl } from '../helpers/batch-run.js';

/** No search backend: the web toolset is unavailable, so each prompt's draw drops it. */
const NO_SEARCH = {
  TRAJ_SEARXNG_URL: undefined,
  BRAVE_API_KEY: undefined,
  TAVILY_API_KEY: undefined,
  FIRECRAWL_API_KEY: undefined,
};

test('toolset drops count each prompt once, across a partial run and two resumes (not "web ×29" for 12 prompts)', async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(echoScript);
  t.after(() => server.close());
  const dataset = join(directory, 'prompts.jsonl');
  writeJsonl(dataset, prompts(12));
  const args = scriptedBatchArgs(dataset, 'drops', server.url, 'NO_KEY', ['--distribution', 'terminal_web']);
  const drops = () =>
    JSON.parse(readFileSync(join(directory, 'datasets', 'drops', 'statistics.json'), 'utf8')).toolset_drops;

  const partial = await runCli([...args, '--limit', '5'], { cwd: directory, env: NO_SEARCH });
  assert.equal(partial.code, 0, partial.stderr);
  assert.deepEqual(drops(), { web: 5 });
  for (const invocation of ['the resume', 'a rerun with nothing left to do']) {
    const resumed = await runCli(args, { cwd: directory, env: NO_SEARCH });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.deepEqual(drops(), { web: 12 }, `after ${invocation}`);
    assert.match(resumed.stdout, /toolsets dropped as unavailable: web ×12\n/);
  }
});
