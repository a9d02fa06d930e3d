import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { callTool, reply, startScriptedServer, type ChatRequest } from '../../src/testing/index.js';
import { prompts, readRecords, scriptedBatchArgs, writeJsonl } from '../helpers/batch-run.js';
import { bwrapSuiteOptions } from '../helpers/bwrap.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';

const bwrap = await bwrapSuiteOptions();

/** bubblewrap processes binding a folder under `root`: a sandbox namespace still alive. */
function namespacesUnder(root: string): number {
  try {
    return execFileSync('pgrep', ['-f', `bwrap .*--bind ${root}`], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean).length;
  } catch {
    return 0; // pgrep exits 1 when nothing matches
  }
}

/**
 * Pool threads tear a finished rollout's sandbox down in the background, so its slot starts the
 * next prompt at once; the run must still end with every namespace and folder gone.
 */
describe('traj batch: background sandbox teardown', bwrap, () => {
  it('leaves no sandbox folder and no namespace behind when the run ends', async (t) => {
    const directory = temporaryDirectory(t);
    const temp = join(directory, 'tmp');
    mkdirSync(temp);
    const server = await startScriptedServer((request: ChatRequest) =>
      request.messages.some((message) => message.role === 'tool')
        ? reply('done')
        : callTool('terminal', { command: 'echo hello > note.txt && cat note.txt' }),
    );
    t.after(() => server.close());
    const dataset = join(directory, 'prompts.jsonl');
    writeJsonl(dataset, prompts(24));
    writeFileSync(join(directory, 'run.yaml'), 'local:\n  isolation: bwrap\n');
    const result = await runCli(
      scriptedBatchArgs(dataset, 'teardown', server.url, 'TRAJ_TEST_NO_KEY', [
        '--config',
        'run.yaml',
        '--toolsets',
        'terminal',
        '--concurrency',
        '8',
        '--workers',
        '2',
      ]),
      { cwd: directory, env: { TMPDIR: temp } },
    );
    assert.equal(result.code, 0, result.stderr);
    const records = readRecords(directory, 'teardown');
    assert.equal(records.length, 24);
    for (const record of records) assert.match(JSON.stringify(record.messages), /hello/);
    assert.deepEqual(
      readdirSync(temp).filter((name) => name.startsWith('traj-sbx-')),
      [],
      'every sandbox folder removed before exit',
    );
    assert.equal(namespacesUnder(temp), 0, 'every namespace ended before exit');
  });
});
