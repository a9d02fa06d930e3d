import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { callTool, reply, startScriptedServer, type Script } from '../../src/testing/index.js';
import { scriptedBatchArgs, readRecords, writeJsonl } from '../helpers/batch-run.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';
import { QWEN3_FOLDER, qwen3 } from '../helpers/qwen3.js';
import { readParquet } from '../export/duckdb.js';

const KEY = { TRAJ_TEST_KEY: 'test-key' };
const RUN_YAML = `tokenizer: ${QWEN3_FOLDER}
endpoint:
  logprobs: true
  token_ids: vllm
  reasoning_echo: always
`;

/**
 * echo hi, then the answer. For a prompt asking for it, the endpoint's ids of the answer split a word
 * where re-tokenising its text would not: only the endpoint's ids can put that split in the export.
 */
function script(split: number[]): Script {
  return (request, context) => {
    if (context.turn === 0)
      return callTool('terminal', { command: 'echo hi' }, { reasoning_content: 'I will run echo.' });
    const prompt = String(request.messages.find((message) => message.role === 'user')?.content);
    return reply('The command printed hi.', {
      reasoning_content: 'It printed hi.',
      ...(prompt.includes('split') ? { token_ids: split } : {}),
    });
  };
}

/** `traj batch` of prompts.jsonl with run.yaml (its `tokenizer:`), model qwen3, against `url`. */
function tokensBatchArgs(url: string): string[] {
  return scriptedBatchArgs(
    'prompts.jsonl',
    'tokens',
    url,
    'TRAJ_TEST_KEY',
    ['--toolsets', 'terminal', '--config', 'run.yaml'],
    'qwen3',
  );
}

test("traj batch with tokenizer: in its run config, then traj export --format tokens: the endpoint's ids and logprobs, as sampled", async (t) => {
  const tokenizer = await qwen3();
  const split = [
    ...tokenizer.encode('<think>\nIt pr'),
    ...tokenizer.encode('inted hi.\n</think>\n\nThe command printed hi.<|im_end|>'),
  ];
  const server = await startScriptedServer(script(split), { tokenizer });
  t.after(() => server.close());
  const directory = temporaryDirectory(t);
  writeJsonl(join(directory, 'prompts.jsonl'), [
    { id: 'plain', prompt: 'Run echo hi and tell me what it printed.' },
    { id: 'split', prompt: 'Run echo hi and tell me what it printed (split).' },
  ]);
  writeFileSync(join(directory, 'run.yaml'), RUN_YAML);
  const batch = await runCli(tokensBatchArgs(server.url), { cwd: directory, env: KEY });
  assert.equal(batch.code, 0, batch.stderr);
  assert.equal(server.requests.length, 4);
  for (const request of server.requests) {
    assert.equal(request.return_token_ids, true, 'the run config asked the endpoint for token ids');
    assert.equal(request.logprobs, true);
  }

  // No --tokenizer: the export takes the run's own (its config's tokenizer:).
  const exported = await runCli(['export', 'tokens', '--format', 'tokens', '--out', 'out'], { cwd: directory });
  assert.equal(exported.code, 0, exported.stderr);
  assert.match(exported.stdout, /exported 2 rows of run 'tokens' as tokens/);
  assert.match(exported.stdout, /drift split#0: message 4, token \d+: endpoint \d+ " pr", re-tokenised \d+ " printed"/);
  assert.doesNotMatch(exported.stdout, /drift plain#0/);

  const records = new Map(readRecords(directory, 'tokens').map((record) => [record.id, record]));
  const { rows } = await readParquet([join(directory, 'out', 'data', 'train-00000-of-00001.parquet')]);
  assert.deepEqual(rows.map((row) => row.id).sort(), ['plain', 'split']);
  for (const row of rows) {
    const record = records.get(row.id as string)!;
    const completionIds = row.completion_ids as number[];
    const mask = row.completion_mask as number[];
    const sampled = completionIds.filter((_, position) => mask[position] === 1);
    // The policy's tokens are the ids the endpoint returned, turn after turn, and only those.
    assert.deepEqual(
      sampled,
      record.completions!.flatMap((completion) => completion.token_ids!),
    );
    if (row.id === 'split') assert.deepEqual(sampled.slice(-split.length), split);
    const logprobs = row.completion_logprobs as Array<number | null>;
    assert.deepEqual(
      logprobs.filter((value) => value !== null),
      record.completions!.flatMap((completion) => completion.logprobs!),
    );
    assert.deepEqual(
      logprobs.map((value) => (value === null ? 0 : 1)),
      mask,
      'a logprob exactly where the policy sampled',
    );
    // Around them, the template's rendering of the conversation; the drifted answer decodes the same.
    const whole = tokenizer.render(record.messages, record.tools, { addGenerationPrompt: false });
    assert.equal(tokenizer.decode([...(row.prompt_ids as number[]), ...completionIds]), whole);
    assert.deepEqual((row.drift as string[]).length, row.id === 'split' ? 1 : 0);
  }
});

test('a tokenizer: that cannot load stops traj batch before any request and leaves no run; the corrected run goes on', async (t) => {
  const tokenizer = await qwen3();
  const server = await startScriptedServer(script([]), { tokenizer });
  t.after(() => server.close());
  const directory = temporaryDirectory(t);
  writeJsonl(join(directory, 'prompts.jsonl'), [{ id: 'plain', prompt: 'Run echo hi.' }]);
  writeFileSync(join(directory, 'run.yaml'), RUN_YAML.replace(QWEN3_FOLDER, './no-such-tokenizer'));
  const args = tokensBatchArgs(server.url);
  const bad = await runCli(args, { cwd: directory, env: KEY });
  assert.equal(bad.code, 2, `a configuration error exits 2: ${bad.stderr}`);
  assert.match(
    bad.stderr,
    /tokenizer: .*no-such-tokenizer is not a folder \(it should hold tokenizer\.json and tokenizer_config\.json\)/,
  );
  assert.equal(server.requests.length, 0, 'no prompt used an attempt');
  assert.equal(existsSync(join(directory, 'checkpoints', 'tokens.sqlite')), false, 'no run store to refuse the fix');

  writeFileSync(join(directory, 'run.yaml'), RUN_YAML);
  const fixed = await runCli(args, { cwd: directory, env: KEY });
  assert.equal(fixed.code, 0, fixed.stderr);
  assert.match(fixed.stdout, /wrote 1 trajectories/);
});
