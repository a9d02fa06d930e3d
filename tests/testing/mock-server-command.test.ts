import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { buildRoot } from '../../src/util/paths.js';

interface CompletionBody {
  choices: Array<{ message: { content: string | null; tool_calls: Array<{ function: { arguments: string } }> } }>;
}

const MAIN = join(buildRoot(), 'src', 'cli', 'main.js');

/** Start `traj mock-server` as a subprocess and wait for the base URL it prints first. */
async function startCommand(args: string[]) {
  const child = spawn(process.execPath, [MAIN, 'mock-server', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const reader = createInterface({ input: child.stdout });
  const url = await new Promise<string>((resolve, reject) => {
    reader.on('line', (line) => {
      lines.push(line);
      if (lines.length === 1) resolve(line);
    });
    child.on('exit', (code) => reject(new Error(`mock-server exited with ${code} before printing its URL: ${stderr}`)));
  });
  return { child, url, lines, exited, stderr: () => stderr };
}

test('traj mock-server prints its base URL, serves the echo script, and stops cleanly on SIGTERM', async () => {
  const server = await startCommand(['--port', '0']);
  assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  const response = await fetch(`${server.url}/chat/completions`, {
    method: 'POST',
    body: JSON.stringify({
      messages: [{ role: 'user', content: 'say hi' }],
      tools: [{ type: 'function', function: { name: 'terminal' } }],
    }),
  });
  const body = (await response.json()) as CompletionBody;
  assert.equal(body.choices[0].message.tool_calls[0].function.arguments, JSON.stringify({ command: "echo 'say hi'" }));
  server.child.kill('SIGTERM');
  assert.equal(await server.exited, 0);
  assert.match(server.lines.at(-1)!, /stopped by SIGTERM after 1 chat requests/);
});

test('traj mock-server --script serves the file, and a bad file fails with its name', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'traj-mock-server-'));
  try {
    const script = join(folder, 'answers.yaml');
    writeFileSync(script, '- content: scripted from a file\n');
    const server = await startCommand(['--port', '0', '--script', script, '--latency-ms', '5']);
    const answer = (await (
      await fetch(`${server.url}/chat/completions`, { method: 'POST', body: '{"messages": []}' })
    ).json()) as CompletionBody;
    assert.equal(answer.choices[0].message.content, 'scripted from a file');
    server.child.kill('SIGINT');
    assert.equal(await server.exited, 0);

    const bad = join(folder, 'bad.yaml');
    writeFileSync(bad, '- fault: nope\n');
    const child = spawn(process.execPath, [MAIN, 'mock-server', '--port', '0', '--script', bad], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    assert.equal(code, 2, 'a config error exits 2');
    assert.match(stderr, /bad\.yaml: 0\.fault/);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});

test('traj mock-server rejects a bad port with the flag name', async () => {
  const child = spawn(process.execPath, [MAIN, 'mock-server', '--port', 'eighty'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  assert.equal(code, 2);
  assert.match(stderr, /--port: expected a whole number/);
});

test('traj mock-server on a port already in use says which port, and exits 2 (not an internal error)', async () => {
  const first = await startCommand(['--port', '0']);
  try {
    const port = new URL(first.url).port;
    const child = spawn(process.execPath, [MAIN, 'mock-server', '--port', port], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    assert.equal(code, 2, stderr);
    assert.match(stderr, new RegExp(`port ${port} on 127\\.0\\.0\\.1 is in use; pick another with --port N`));
    assert.doesNotMatch(stderr, /internal error|EADDRINUSE/);
  } finally {
    first.child.kill('SIGTERM');
    await first.exited;
  }
});
