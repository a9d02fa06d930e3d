import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createLocalSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { loadToolRegistry, shortenMiddle, TERMINAL_OUTPUT_MAX_CHARS } from '../../src/tools/index.js';
import { callTool, errorOf, freshShellTools, jsonOf, toolContext } from './tool-context.js';

interface TerminalResult {
  exit_code: number;
  output: string;
  timed_out?: boolean;
  shell?: string;
}

const RESTART_NOTE =
  'the next call starts a new shell in the same folder with the exported variables kept (functions and other variables are lost)';

describe('terminal tool', () => {
  let sandbox: Sandbox;

  before(async () => {
    sandbox = await createLocalSandbox();
  });
  after(async () => {
    await sandbox.dispose();
  });

  it('returns the exit code and stdout followed by stderr', async () => {
    const result = jsonOf<TerminalResult>(
      await callTool('terminal', { command: 'echo out; echo err >&2; (exit 7)' }, toolContext(sandbox)),
    );
    assert.deepEqual(result, { exit_code: 7, output: 'out\nerr\n' });
    const unterminated = jsonOf<TerminalResult>(
      await callTool('terminal', { command: 'printf out; printf err >&2' }, toolContext(sandbox)),
    );
    assert.deepEqual(unterminated, { exit_code: 0, output: 'out\nerr' });
  });

  it('runs in the working directory, or in workdir when given', async () => {
    await sandbox.writeFile('sub/marker.txt', 'here');
    const top = jsonOf<TerminalResult>(await callTool('terminal', { command: 'pwd' }, toolContext(sandbox)));
    assert.equal(top.output, `${sandbox.workdir}\n`);
    const sub = jsonOf<TerminalResult>(
      await callTool('terminal', { command: 'cat marker.txt', workdir: 'sub' }, toolContext(sandbox)),
    );
    assert.equal(sub.output, 'here');
    const missing = errorOf(await callTool('terminal', { command: 'pwd', workdir: 'nowhere' }, toolContext(sandbox)));
    assert.match(missing.error, /'nowhere' does not exist/);
    assert.match(missing.hint ?? '', /mkdir -p/);
  });

  it('keeps the first 40% and the last 60% of output over 50,000 characters, with a marker', async () => {
    const full = `${Array.from({ length: 20_000 }, (_, index) => `${index + 1}`).join('\n')}\n`;
    const result = jsonOf<TerminalResult>(await callTool('terminal', { command: 'seq 1 20000' }, toolContext(sandbox)));
    assert.equal(result.exit_code, 0);
    const head = full.slice(0, 20_000);
    const tail = full.slice(full.length - 30_000);
    const omitted = full.length - 50_000;
    assert.equal(
      result.output,
      `${head}\n\n[... ${omitted} characters omitted from the middle of the output ...]\n\n${tail}`,
    );
  });

  it('leaves output of exactly the cap untouched', () => {
    const exact = 'x'.repeat(TERMINAL_OUTPUT_MAX_CHARS);
    assert.equal(shortenMiddle(exact), exact);
    assert.match(shortenMiddle(`${exact}y`), /\[\.\.\. 1 characters omitted/);
  });

  it('kills a command at its timeout and says so', async () => {
    const marker = `${randomInt(3_000, 9_000)}.${randomInt(100_000, 999_999)}`;
    const outcome = await callTool(
      'terminal',
      { command: `echo before; sleep ${marker} & sleep ${marker}; echo never`, timeout: 1 },
      toolContext(sandbox),
    );
    const result = jsonOf<TerminalResult>(outcome);
    assert.equal(result.timed_out, true);
    assert.notEqual(result.exit_code, 0);
    assert.equal(
      result.output,
      `before\n[timed out after 1 s: the command and the processes it started were killed; the shell was killed with it; ${RESTART_NOTE}]`,
    );
    assert.equal(result.shell, 'restarted');
    const survivors = await sandbox.exec(`ps -eo stat=,args= | grep -v '^Z' | grep -c '[s]leep ${marker}' || true`);
    assert.equal(survivors.stdout.trim(), '0');
  });

  it('refuses a foreground timeout over 600 s, pointing at background, and a fractional timeout as a schema error', async () => {
    const long = errorOf(await callTool('terminal', { command: 'true', timeout: 601 }, toolContext(sandbox)));
    assert.equal(long.error, 'foreground timeout 601 s is above the 600 s limit');
    assert.match(long.hint ?? '', /background=true/);
    const ok = jsonOf<TerminalResult>(
      await callTool('terminal', { command: 'true', timeout: 600 }, toolContext(sandbox)),
    );
    assert.equal(ok.exit_code, 0);
    assert.match(
      errorOf(await callTool('terminal', { command: 'true', timeout: 1.5 }, toolContext(sandbox))).error,
      /timeout: /,
    );
  });

  it('an abort of the run interrupts a running command', async () => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 300);
    const outcome = await callTool(
      'terminal',
      { command: 'sleep 30; echo never' },
      toolContext(sandbox, { signal: controller.signal }),
    );
    clearTimeout(timer);
    assert.deepEqual(errorOf(outcome), { error: '[interrupted]' });
  });

  it('no API key or token reaches env run through the tool', async () => {
    const saved = { OPENAI_API_KEY: process.env.OPENAI_API_KEY, HF_TOKEN: process.env.HF_TOKEN };
    process.env.OPENAI_API_KEY = 'sk-test-terminal-0000';
    process.env.HF_TOKEN = 'hf_test_terminal_0000';
    try {
      const result = jsonOf<TerminalResult>(
        await callTool('terminal', { command: 'env' }, toolContext(sandbox, { env: process.env })),
      );
      assert.equal(result.exit_code, 0);
      assert.match(result.output, /^PATH=/m);
      assert.doesNotMatch(result.output, /_API_KEY=|_TOKEN=|sk-test-terminal|hf_test_terminal/);
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it('carries cd, variables and functions over to the next call, and says when `exit` restarted the shell', async () => {
    const context = toolContext(sandbox);
    const set = jsonOf<TerminalResult>(
      await callTool(
        'terminal',
        { command: `cd ${sandbox.workdir} && mkdir -p carried && cd carried && export A=1 B=2; f() { echo f$A; }` },
        context,
      ),
    );
    assert.deepEqual(set, { exit_code: 0, output: '' });
    const read = jsonOf<TerminalResult>(await callTool('terminal', { command: 'pwd; echo $A$B; f' }, context));
    assert.equal(read.output, `${sandbox.workdir}/carried\n12\nf1\n`);
    const exited = jsonOf<TerminalResult>(await callTool('terminal', { command: 'echo out; exit 7' }, context));
    assert.deepEqual(exited, {
      exit_code: 7,
      output: `out\n[the shell exited (code 7); ${RESTART_NOTE}]`,
      shell: 'restarted',
    });
    const after = jsonOf<TerminalResult>(await callTool('terminal', { command: 'pwd; echo $A$B' }, context));
    assert.deepEqual(after, { exit_code: 0, output: `${sandbox.workdir}/carried\n12\n` });
    await callTool('terminal', { command: `cd ${sandbox.workdir}` }, context);
  });
});

describe('terminal tool with terminal.persistent: false', () => {
  let sandbox: Sandbox;

  before(async () => {
    sandbox = await createLocalSandbox();
  });
  after(async () => {
    await sandbox.dispose();
  });

  it("offers Hermes' description unchanged, says so in each result, and carries no cd, variable or function to the next call", async () => {
    const fresh = freshShellTools.find((tool) => tool.name === 'terminal')!;
    const persistent = (await loadToolRegistry()).all().find((tool) => tool.name === 'terminal')!;
    assert.equal(fresh.description, persistent.description);
    const note = '[this run starts a fresh shell per call: cd and variables do not carry over]';
    const context = toolContext(sandbox);
    const set = jsonOf<TerminalResult>(
      await callTool(
        'terminal',
        { command: 'mkdir -p d && cd d && export A=1; f() { :; }; exit 7' },
        context,
        freshShellTools,
      ),
    );
    assert.deepEqual(set, { exit_code: 7, output: note });
    const read = jsonOf<TerminalResult>(
      await callTool('terminal', { command: 'pwd; echo "[${A-}]"; type f 2>&1 | head -c 0' }, context, freshShellTools),
    );
    assert.deepEqual(read, { exit_code: 0, output: `${sandbox.workdir}\n[]\n${note}` });
  });
});
