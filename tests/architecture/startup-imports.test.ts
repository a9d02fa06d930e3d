import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { projectRoot } from '../../src/util/paths.js';

const SOURCE = join(projectRoot(), 'src');

/**
 * The packages a file loads before its first line runs: static imports and re-exports, followed
 * through src/ (type-only ones are erased, and dynamic `import()` waits for first use). The SDK's
 * loader (model/openai-sdk.ts) counts as openai: it imports the SDK at its top level.
 */
function staticPackages(entry: string): Map<string, string[]> {
  return staticGraph(entry).packages;
}

/** The packages (with the chain that reaches each) and the src/ files a file loads at start. */
function staticGraph(entry: string): { packages: Map<string, string[]>; files: Set<string> } {
  const reached = new Map<string, string[]>();
  const seen = new Set<string>();
  const walk = (file: string, chain: string[]) => {
    if (seen.has(file)) return;
    seen.add(file);
    if (file === join(SOURCE, 'model', 'openai-sdk.ts')) reached.set('openai', chain);
    const text = readFileSync(file, 'utf8');
    const pattern = /^\s*(?:import|export)\s+(?!type\b)(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/gm;
    for (const match of text.matchAll(pattern)) {
      const target = match[1]!;
      const here = [...chain, relative(SOURCE, file)];
      if (target.startsWith('.')) {
        const path = resolve(dirname(file), target.replace(/\.js$/, '.ts'));
        if (existsSync(path)) walk(path, here);
      } else if (!target.startsWith('node:')) {
        const name = target.startsWith('@') ? target.split('/').slice(0, 2).join('/') : target.split('/')[0]!;
        if (!reached.has(name)) reached.set(name, here);
      }
    }
  };
  walk(join(SOURCE, entry), []);
  return { packages: reached, files: new Set([...seen].map((file) => relative(SOURCE, file))) };
}

function assertNotLoaded(entry: string, packages: string[], why: string): void {
  const reached = staticPackages(entry);
  for (const name of packages) {
    const chain = reached.get(name);
    assert.equal(chain, undefined, `${entry} loads ${name} at start (${why}): ${chain?.join(' → ')} → ${name}`);
  }
}

test('traj batch starts its worker threads before it loads the SDK, SQLite or YAML', () => {
  assertNotLoaded('cli/batch.ts', ['openai', 'better-sqlite3', 'yaml'], 'the pool starts right after this');
});

test('the main thread of a run loads the openai SDK only when its rollouts run there (no worker threads)', () => {
  assertNotLoaded('cli/batch-execute.ts', ['openai'], 'preflight needs no SDK');
  assertNotLoaded('run/execute-run.ts', ['openai'], 'preflight needs no SDK');
});

test('a worker thread loads neither SQLite nor YAML before a rollout needs them', () => {
  assertNotLoaded('run/worker.ts', ['better-sqlite3', 'yaml'], 'each thread would pay ~30 ms');
  assert.ok(staticPackages('run/worker.ts').has('openai'), 'the walk follows static imports to the SDK');
});

test('no tool is loaded at start: a run imports the toolsets it offers when it offers them', () => {
  const tools = [
    'tools/read-file.ts',
    'tools/terminal.ts',
    'tools/browser/browser-navigate.ts',
    'tools/web/web-extract.ts',
    'tools/code/execute-code.ts',
    'tools/delegate/delegate-task.ts',
  ];
  for (const entry of ['run/worker.ts', 'cli/batch.ts', 'cli/batch-execute.ts', 'run/in-process-runner.ts']) {
    const { files } = staticGraph(entry);
    assert.ok(files.has('tools/builtin.ts') || entry !== 'run/worker.ts', `${entry}: the walk reaches the catalog`);
    for (const tool of tools) assert.ok(!files.has(tool), `${entry} loads ${tool} at start`);
  }
});

test('a plain run loads no agent bridge, reward scorer, tokenizer or diff package at start', () => {
  for (const entry of ['run/worker.ts', 'run/thread-rollout.ts', 'run/rollout.ts']) {
    assertNotLoaded(
      entry,
      ['diff', 'tar-stream', '@huggingface/tokenizers', '@huggingface/jinja'],
      'loaded with the first patch, agent CLI or tokenizer',
    );
    const { files } = staticGraph(entry);
    assert.ok(files.has('run/rollout.ts'), `${entry}: the walk reaches the rollout`);
    for (const file of ['bridge/run-agent-cli.ts', 'bridge/recording-proxy.ts', 'eval/score.ts'])
      assert.ok(!files.has(file), `${entry} loads ${file} at start`);
  }
});
