import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { renderReference } from '../../src/cli/reference.js';
import { projectRoot } from '../../src/util/paths.js';

const committed = () => readFileSync(join(projectRoot(), 'docs', 'reference.md'), 'utf8');

test('docs/reference.md is what the code says (npm run docs:reference rewrites it)', async () => {
  const generated = await renderReference();
  const page = committed();
  if (generated !== page) {
    const want = generated.split('\n');
    const have = page.split('\n');
    const line = want.findIndex((text, index) => text !== have[index]);
    assert.fail(
      `docs/reference.md differs from the code at line ${line + 1}:\n  page: ${have[line]}\n  code: ${want[line]}\nRun npm run docs:reference and commit docs/reference.md.`,
    );
  }
});

test('the reference holds every command, run-config key, error code and exit code, and the record columns', async () => {
  const page = await renderReference();
  for (const heading of ['### traj batch', '### traj export', '### traj mock-server'])
    assert.ok(page.includes(`\n${heading}\n`), heading);
  assert.match(page, /\| `--max-cost` \| `USD` \|/, 'a flag row, from the command definition');
  assert.match(page, /\| `endpoint\.temperature` \| number ≥ 0, ≤ 2 \|/, 'a nested run-config key with its bounds');
  assert.match(page, /\| `concurrency` \| integer > 0 \| `32` \|/, 'a default');
  assert.match(page, /\| `model_auth` \| `ModelError` \| run_fault \| 4 \|/, 'an error code with its class and exit');
  assert.match(page, /\| `cli_usage` \| `ConfigError` \| fail \| 2 \|/);
  assert.match(page, /\| 130 \| interrupted/);
  assert.match(page, /\| `usage\.prompt_tokens` \| Int64 \| no \|/, 'a nested record column');
  assert.match(page, /\| `messages\[\]\.tool_calls\[\]\.function\.name` \| Utf8 \|/, 'a field inside lists');
});
