import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Ajv } from 'ajv';
import { type ScriptFunction, type ScriptedToolCall, callTools } from '../../src/testing/index.js';
import { startScriptedServer } from '../../src/testing/index.js';
import { projectRoot } from '../../src/util/paths.js';
import { prompts, readRecords, scriptedBatchArgs, writeJsonl } from '../helpers/batch-run.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';
import type { HermesGolden } from '../helpers/hermes-schemas.js';

const golden = JSON.parse(
  readFileSync(join(projectRoot(), 'tests', 'fixtures', 'hermes', 'tool-schemas.json'), 'utf8'),
) as HermesGolden;

/** Calls, in Hermes' words, for each tool of the development distribution the scripted model may see. */
const CALLS: Record<string, ScriptedToolCall['arguments']> = {
  terminal: { command: 'printf "alpha\\nbeta\\n" > notes.txt && echo made', timeout: 30 },
  write_file: { path: 'plan.md', content: 'step one\nstep two\n' },
  read_file: { path: 'plan.md', offset: 1, limit: 10 },
  patch: { mode: 'replace', path: 'plan.md', old_string: 'step two', new_string: 'step 2', replace_all: false },
  search_files: { pattern: 'step', target: 'content', output_mode: 'count', context: 0 },
};

/** Turn 1: every offered tool of CALLS at once; turn 2: the answer. */
const developmentScript: ScriptFunction = (request) => {
  if (request.messages.some((message) => message.role === 'tool')) return { content: 'done' };
  const offered = new Set(request.tools?.map((tool) => tool.function?.name) ?? []);
  const calls = Object.entries(CALLS)
    .filter(([name]) => offered.has(name))
    .map(([name, args]) => ({ name, arguments: args }));
  return calls.length > 0 ? callTools(calls) : { content: 'no tools' };
};

test('a --distribution development batch records tool calls that validate against Hermes schemas', async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(developmentScript);
  t.after(() => server.close());
  const dataset = join(directory, 'prompts.jsonl');
  writeJsonl(dataset, prompts(12));
  const args = scriptedBatchArgs(
    dataset,
    'dev',
    server.url,
    'NO_KEY',
    ['--distribution', 'development', '--seed', '3'],
    'scripted-a',
  );
  const result = await runCli(args, { cwd: directory });
  assert.equal(result.code, 0, result.stderr);
  const records = readRecords(directory, 'dev');
  assert.equal(records.length, 12);
  const ajv = new Ajv({ strict: false });
  const seen = new Set<string>();
  let checked = 0;
  for (const record of records) {
    for (const message of record.messages) {
      if (message.role !== 'assistant' || !message.tool_calls) continue;
      for (const call of message.tool_calls) {
        const entry = golden.tools[call.function.name];
        assert.ok(entry, `${call.function.name} is a Hermes tool`);
        const validate = ajv.compile(entry.schema.parameters as object);
        const valid = validate(JSON.parse(call.function.arguments));
        assert.ok(valid, `${call.function.name} ${call.function.arguments}: ${ajv.errorsText(validate.errors)}`);
        seen.add(call.function.name);
        checked++;
      }
    }
    // Each call worked with Hermes' arguments: no tool result is an argument error.
    for (const message of record.messages)
      if (message.role === 'tool')
        assert.doesNotMatch(String(message.content), /invalid arguments/, String(message.content));
  }
  assert.ok(checked > 12, `tool calls were checked (${checked})`);
  for (const name of ['terminal', 'read_file', 'write_file', 'patch', 'search_files'])
    assert.ok(seen.has(name), `some rollout called ${name}`);
  // The arguments a record holds are what the schema rejects when changed: the check can fail.
  const validate = ajv.compile(golden.tools.patch!.schema.parameters as object);
  assert.equal(validate({ path: 'plan.md', old_text: 'a', new_text: 'b' }), false, "traj's old patch arguments fail");
});
