import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLocalSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { applyBudget, BudgetSchema, DEFAULT_BUDGET, type BudgetedResult } from '../../src/tools/index.js';

/** Distinct, position-revealing text of the given length, so a preview is checkable. */
function body(tag: string, length: number): string {
  const unit = `${tag}:0123456789abcdef;`;
  return unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
}

function spilledPath(content: string): string {
  const match = /the full text is saved at (\S+) —/.exec(content);
  assert.ok(match, `no spill path in: ${content.slice(-300)}`);
  return match[1]!;
}

describe('tool-result budget', () => {
  let sandbox: Sandbox;

  before(async () => {
    sandbox = await createLocalSandbox();
  });
  after(async () => {
    await sandbox.dispose();
  });

  it('spills a 150k result to a file in the sandbox and leaves a 1,500-char preview plus the path', async () => {
    const full = body('big', 150_000);
    const [result] = await applyBudget(
      [{ id: 'call_1', name: 'terminal', toolset: 'terminal', content: full }],
      sandbox,
    );
    const content = result!.content;
    assert.ok(content.startsWith(full.slice(0, DEFAULT_BUDGET.preview_chars)));
    assert.ok(!content.includes(full.slice(0, DEFAULT_BUDGET.preview_chars + 1)));
    assert.ok(content.length < 2_000);
    assert.match(content, /150000 chars in all/);
    assert.match(content, /read_file/);
    const path = spilledPath(content);
    assert.ok(path.startsWith('.traj/tool-results/'));
    assert.equal((await sandbox.readFile(path)).toString(), full);
    const viaShell = await sandbox.exec(`wc -c < '${path}'`);
    assert.equal(viaShell.stdout.trim(), '150000');
  });

  it('leaves results under the caps untouched', async () => {
    const results: BudgetedResult[] = [
      { id: 'call_1', name: 'terminal', toolset: 'terminal', content: body('ok', 99_000) },
    ];
    assert.deepEqual(await applyBudget(results, sandbox), results);
  });

  it('a turn over 200k spills the largest results first until it fits, keeping call order', async () => {
    const results: BudgetedResult[] = [
      { id: 'call_a', name: 'terminal', toolset: 'terminal', content: body('a', 90_000) },
      { id: 'call_b', name: 'read_file', toolset: 'file', content: body('b', 95_000) },
      { id: 'call_c', name: 'terminal', toolset: 'terminal', content: body('c', 85_000) },
    ];
    const out = await applyBudget(results, sandbox);
    assert.deepEqual(
      out.map((result) => result.id),
      ['call_a', 'call_b', 'call_c'],
    );
    assert.equal(out[0]!.content, results[0]!.content);
    assert.equal(out[2]!.content, results[2]!.content);
    assert.ok(out[1]!.content.length < 2_000);
    assert.equal((await sandbox.readFile(spilledPath(out[1]!.content))).toString(), results[1]!.content);
    assert.ok(out.reduce((sum, result) => sum + result.content.length, 0) <= DEFAULT_BUDGET.turn_max_chars);

    const four = await applyBudget(
      [...results, { id: 'call_d', name: 'terminal', toolset: 'terminal', content: body('d', 80_000) }],
      sandbox,
    );
    assert.deepEqual(
      four.map((result) => result.content.length < 2_000),
      [true, true, false, false],
    );
  });

  it('caps MCP results at 50k, and per-toolset caps are configurable', async () => {
    const [mcp, mcpSmall, custom] = await applyBudget(
      [
        { id: 'call_m', name: 'mcp__github__search', toolset: 'mcp:github', content: body('m', 60_000) },
        { id: 'call_s', name: 'mcp__github__get', toolset: 'mcp:github', content: body('s', 40_000) },
        { id: 'call_t', name: 'terminal', toolset: 'terminal', content: body('t', 20_000) },
      ],
      sandbox,
      BudgetSchema.parse({ toolset_max_chars: { terminal: 10_000 } }),
    );
    assert.equal((await sandbox.readFile(spilledPath(mcp!.content))).toString(), body('m', 60_000));
    assert.equal(mcpSmall!.content, body('s', 40_000));
    assert.equal((await sandbox.readFile(spilledPath(custom!.content))).toString(), body('t', 20_000));
  });

  it('all limits and the spill folder are configurable', async () => {
    const budget = BudgetSchema.parse({ result_max_chars: 100, preview_chars: 10, spill_dir: 'spilled/here' });
    const [result] = await applyBudget([{ id: 'x', name: 'terminal', content: body('cfg', 150) }], sandbox, budget);
    assert.ok(result!.content.startsWith(`${body('cfg', 10)}\n\n[result truncated: 150 chars in all`));
    const path = spilledPath(result!.content);
    assert.ok(path.startsWith('spilled/here/'));
    assert.equal((await sandbox.readFile(path)).toString(), body('cfg', 150));
  });

  it('a tool name or call id with path characters still spills inside the spill folder', async () => {
    const [result] = await applyBudget(
      [{ id: 'call/../../x', name: '../../evil name', content: body('e', 120_000) }],
      sandbox,
    );
    const path = spilledPath(result!.content);
    assert.match(path, /^\.traj\/tool-results\/[A-Za-z0-9_.-]+\.txt$/);
    assert.doesNotMatch(path, /\.\./);
    assert.equal((await sandbox.readFile(path)).toString(), body('e', 120_000));
  });
});
