import assert from 'node:assert/strict';
import { chmodSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { callTool, reply, startScriptedServer } from '../../src/testing/index.js';
import { bwrapSuiteOptions } from '../helpers/bwrap.js';
import { prompts, readRecords, scriptedBatchArgs, writeJsonl } from '../helpers/batch-run.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';

const bwrap = await bwrapSuiteOptions();

/**
 * A bwrap that notes each start in `log` (one line per process, so concurrent starts never
 * overwrite each other), then is the real one.
 */
function countingBwrap(directory: string): { binary: string; starts: () => string[] } {
  const log = join(directory, 'bwrap-starts');
  const binary = join(directory, 'bwrap');
  writeFileSync(binary, `#!/bin/sh\necho "$*" >> "${log}.$$"\nexec bwrap "$@"\n`);
  chmodSync(binary, 0o755);
  const starts = () =>
    readdirSync(directory)
      .filter((name) => name.startsWith('bwrap-starts.'))
      .map((name) => readFileSync(join(directory, name), 'utf8'));
  return { binary, starts };
}

describe('the bubblewrap probe', bwrap, () => {
  it('runs once per batch, in the main thread: rollouts on two worker threads reuse its answer', async (t) => {
    const directory = temporaryDirectory(t);
    // Every rollout writes a file (its sandbox is created) and runs no command (no namespace is opened).
    const server = await startScriptedServer((request) =>
      request.messages.at(-1)?.role === 'tool'
        ? reply('saved')
        : callTool('write_file', { path: 'note.txt', content: 'a note\n' }),
    );
    t.after(() => server.close());
    const dataset = join(directory, 'prompts.jsonl');
    writeJsonl(dataset, prompts(8));
    const { binary, starts } = countingBwrap(directory);
    const result = await runCli(
      scriptedBatchArgs(dataset, 'probe-once', server.url, 'NO_KEY', ['--toolsets', 'file', '--workers', '2']),
      { cwd: directory, env: { TRAJ_BWRAP: binary } },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.doesNotMatch(result.stderr, /NOT isolated/);
    const records = readRecords(directory, 'probe-once');
    assert.equal(records.length, 8);
    assert.equal(records[0]!.messages.at(-1)?.content, 'saved');
    const probes = starts();
    assert.equal(probes.length, 1, `bwrap started ${probes.length} times:\n${probes.join('')}`);
    // The probe is a zygote asked to make one sandbox and exit.
    assert.ok(probes[0]!.trimEnd().endsWith(' probe'), probes[0]);
    // The probe needs no walk of /etc: only the system folders are in its view.
    assert.doesNotMatch(probes[0]!, /\/dev\/null \/etc\//);
  });
});
