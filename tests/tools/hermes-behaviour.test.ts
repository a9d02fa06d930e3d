import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createLocalSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { disposeToolState } from '../../src/tools/index.js';
import { MEMORY_STATE_KEY, MEMORY_TARGETS, MemoryStore } from '../../src/tools/memory/index.js';
import { SKILLS_STATE_KEY, SkillLibrary } from '../../src/tools/skills/index.js';
import { callTool, errorOf, jsonOf, toolContext } from './tool-context.js';

/** What each of Hermes' parameters does, tool by tool; each case fails on a near miss. */
describe("Hermes' parameters do what they say", () => {
  let sandbox: Sandbox;
  const context = () => toolContext(sandbox);
  const file = async (path: string) => (await sandbox.readFile(path)).toString();
  before(async () => {
    sandbox = await createLocalSandbox();
  });
  after(async () => {
    await sandbox.dispose();
  });

  describe('patch', () => {
    const seed = async () => {
      await sandbox.writeFile('v4a/app.py', 'def main():\n    print("hi")\n    return 0\n');
      await sandbox.writeFile('v4a/old.txt', 'obsolete\n');
      await sandbox.writeFile('v4a/keep.txt', 'moved text\n');
    };
    const patch = (body: string) => `*** Begin Patch\n${body}*** End Patch\n`;

    it('a V4A patch adds, updates, deletes and moves files in one call', async () => {
      await seed();
      const result = jsonOf(
        await callTool(
          'patch',
          {
            mode: 'patch',
            patch: patch(
              '*** Update File: v4a/app.py\n@@ def main():\n     print("hi")\n-    return 0\n+    return 1\n' +
                '*** Add File: v4a/new.md\n+# New\n+second line\n' +
                '*** Delete File: v4a/old.txt\n' +
                '*** Move File: v4a/keep.txt -> v4a/moved/keep.txt\n',
            ),
          },
          context(),
        ),
      );
      assert.equal(await file('v4a/app.py'), 'def main():\n    print("hi")\n    return 1\n');
      assert.equal(await file('v4a/new.md'), '# New\nsecond line\n');
      assert.equal(existsSync(join(sandbox.workdir, 'v4a/old.txt')), false);
      assert.equal(existsSync(join(sandbox.workdir, 'v4a/keep.txt')), false);
      assert.equal(await file('v4a/moved/keep.txt'), 'moved text\n');
      assert.deepEqual(result.files_modified, ['v4a/app.py']);
      assert.deepEqual(result.files_created, ['v4a/new.md', 'v4a/moved/keep.txt']);
      assert.deepEqual(result.files_deleted, ['v4a/old.txt', 'v4a/keep.txt']);
      assert.match(String(result.diff), /- {4}return 0\n\+ {4}return 1/);
    });

    it('one hunk that does not match leaves every file untouched, and says which', async () => {
      await seed();
      const outcome = await callTool(
        'patch',
        {
          mode: 'patch',
          patch: patch(
            '*** Add File: v4a/never.md\n+x\n' +
              '*** Delete File: v4a/old.txt\n' +
              '*** Update File: v4a/app.py\n@@ def main():\n-    return 42\n+    return 1\n',
          ),
        },
        context(),
      );
      assert.match(errorOf(outcome).error, /v4a\/app\.py/);
      assert.equal(existsSync(join(sandbox.workdir, 'v4a/never.md')), false, 'the add was not applied');
      assert.equal(await file('v4a/old.txt'), 'obsolete\n', 'the delete was not applied');
      assert.equal(await file('v4a/app.py'), 'def main():\n    print("hi")\n    return 0\n');
    });

    it('a malformed patch names the line; a missing patch in patch mode says what to pass', async () => {
      const malformed = errorOf(
        await callTool('patch', { mode: 'patch', patch: '*** Begin Patch\nnonsense\n*** End Patch' }, context()),
      );
      assert.match(malformed.error, /line 2/);
      assert.match(errorOf(await callTool('patch', { mode: 'patch' }, context())).error, /mode='patch' needs patch/);
    });

    it('replace_all replaces every occurrence; without it several matches change nothing', async () => {
      await sandbox.writeFile('all.txt', 'a-b a-b a-b\n');
      errorOf(
        await callTool('patch', { mode: 'replace', path: 'all.txt', old_string: 'a-b', new_string: 'c' }, context()),
      );
      assert.equal(await file('all.txt'), 'a-b a-b a-b\n');
      jsonOf(
        await callTool(
          'patch',
          { mode: 'replace', path: 'all.txt', old_string: 'a-b', new_string: 'c', replace_all: true },
          context(),
        ),
      );
      assert.equal(await file('all.txt'), 'c c c\n');
    });
  });

  describe('search_files', () => {
    before(async () => {
      await sandbox.writeFile('s/one.py', 'import os\nx = 1\nneedle here\ny = 2\nz = 3\n');
      await sandbox.writeFile('s/two.py', 'needle\nneedle again\n');
      await sandbox.writeFile('s/three.txt', 'needle in text\n');
    });
    const search = async (args: Record<string, unknown>) => {
      const outcome = await callTool('search_files', { path: 's', ...args }, context());
      assert.equal(outcome.ok, true, outcome.content);
      return outcome.content.split('\n');
    };

    it('output_mode files_only lists each file once; count gives matches per file', async () => {
      assert.deepEqual((await search({ pattern: 'needle', output_mode: 'files_only' })).sort(), [
        's/one.py',
        's/three.txt',
        's/two.py',
      ]);
      assert.deepEqual((await search({ pattern: 'needle', output_mode: 'count' })).sort(), [
        's/one.py:1',
        's/three.txt:1',
        's/two.py:2',
      ]);
    });

    it('file_glob narrows a content search to matching file names', async () => {
      assert.deepEqual((await search({ pattern: 'needle', file_glob: '*.txt' })).sort(), [
        's/three.txt:1:needle in text',
      ]);
    });

    it('context shows the lines around a match', async () => {
      assert.deepEqual(await search({ pattern: 'needle here', context: 1 }), [
        's/one.py-2-x = 1',
        's/one.py:3:needle here',
        's/one.py-4-y = 2',
      ]);
    });

    it('offset pages through the results, each page saying where the next begins', async () => {
      const all = (await search({ pattern: 'needle', limit: 10 })).sort();
      assert.equal(all.length, 4);
      const first = await search({ pattern: 'needle', limit: 3 });
      assert.equal(first[3], '[lines 1-3 of 4; call again with offset 3 for more]');
      const second = await search({ pattern: 'needle', limit: 3, offset: 3 });
      assert.equal(second.length, 1, 'the last page has no footer');
      assert.deepEqual([...first.slice(0, 3), ...second].sort(), all);
      assert.deepEqual(await search({ pattern: 'needle', offset: 9 }), ['no lines past offset 9: there are 4']);
    });
  });

  describe('process', () => {
    it('submit sends a line with Enter; close ends stdin so a reader sees end of file', async (t) => {
      const state = new Map<string, unknown>();
      t.after(() => disposeToolState(state));
      const ctx = toolContext(sandbox, { state });
      const started = jsonOf(
        await callTool(
          'terminal',
          { command: 'read name; echo "hello $name"; cat > rest.txt; echo "rest done"', background: true },
          ctx,
        ),
      );
      const session_id = String(started.session_id);
      assert.deepEqual(jsonOf(await callTool('process', { action: 'submit', session_id, data: 'ada' }, ctx)), {
        session_id,
        written_bytes: 4,
      });
      await callTool('process', { action: 'write', session_id, data: 'no newline yet' }, ctx);
      const running = jsonOf(await callTool('process', { action: 'wait', session_id, timeout: 1 }, ctx));
      assert.deepEqual([running.state, running.new_output], ['running', 'hello ada\n'], 'cat waits for more');
      assert.deepEqual(jsonOf(await callTool('process', { action: 'close', session_id }, ctx)), {
        session_id,
        stdin: 'closed',
      });
      const done = jsonOf(await callTool('process', { action: 'wait', session_id, timeout: 10 }, ctx));
      assert.deepEqual([done.state, done.exit_code, done.new_output], ['exited', 0, 'rest done\n']);
      assert.equal(await file('rest.txt'), 'no newline yet');
      assert.match(
        errorOf(await callTool('process', { action: 'submit', session_id }, ctx)).error,
        /submit needs data/,
      );
    });
  });

  describe('terminal', () => {
    it('pty, notify_on_complete and watch_patterns are accepted, and the result says what was not honoured', async (t) => {
      const state = new Map<string, unknown>();
      t.after(() => disposeToolState(state));
      const ctx = toolContext(sandbox, { state });
      const pty = jsonOf(
        await callTool('terminal', { command: 'test -t 0 && echo tty || echo no-tty', pty: true }, ctx),
      );
      assert.equal(
        pty.output,
        'no-tty\n[pty: the sandbox has no terminal, so the command ran without one (stdin is empty)]',
      );
      const plain = jsonOf(await callTool('terminal', { command: 'echo plain' }, ctx));
      assert.equal(plain.output, 'plain\n', 'no note when nothing was asked for');
      const background = jsonOf(
        await callTool(
          'terminal',
          { command: 'sleep 30', background: true, notify_on_complete: true, watch_patterns: ['ERROR'] },
          ctx,
        ),
      );
      assert.deepEqual(background.notes, [
        "notify_on_complete: this harness sends no notifications; use process(action='wait') or process(action='poll') with the session_id",
      ]);
    });
  });

  describe('memory', () => {
    let folder: string;
    const state = new Map<string, unknown>();
    before(() => {
      folder = mkdtempSync(join(tmpdir(), 'traj-memory-batch-'));
      state.set(MEMORY_STATE_KEY, new MemoryStore(folder));
    });
    after(() => rmSync(folder, { recursive: true, force: true }));
    const memory = (args: Record<string, unknown>) => callTool('memory', args, toolContext(sandbox, { state }));

    it('a batch of operations applies in order, with the character use reported', async () => {
      await memory({ target: 'memory', action: 'add', content: 'Uses pnpm.' });
      await memory({ target: 'memory', action: 'add', content: 'Old fact.' });
      const result = jsonOf(
        await memory({
          target: 'memory',
          operations: [
            { action: 'remove', old_text: 'Old fact' },
            { action: 'replace', old_text: 'pnpm', content: 'Uses npm workspaces.' },
            { action: 'add', content: 'CI runs make check.' },
          ],
        }),
      );
      assert.deepEqual(result.entries, ['Uses npm workspaces.', 'CI runs make check.']);
      assert.equal(result.used_chars, 'Uses npm workspaces.\n§\nCI runs make check.'.length);
      assert.equal(result.limit_chars, MEMORY_TARGETS.memory.limit);
      assert.equal(readFileSync(join(folder, 'MEMORY.md'), 'utf8').includes('CI runs make check.'), true);
    });

    it('one failing operation applies none of the batch', async () => {
      const before = readFileSync(join(folder, 'MEMORY.md'), 'utf8');
      const failed = errorOf(
        await memory({
          target: 'memory',
          operations: [
            { action: 'add', content: 'Would be new.' },
            { action: 'remove', old_text: 'no such entry' },
          ],
        }),
      );
      assert.match(failed.error, /no memory entry contains 'no such entry'/);
      assert.equal(readFileSync(join(folder, 'MEMORY.md'), 'utf8'), before);
    });

    it('the limit is checked on the result: an add that overflows alone fits when the batch frees room', async () => {
      const { limit } = MEMORY_TARGETS.user;
      await memory({ target: 'user', action: 'add', content: 'a'.repeat(limit - 20) });
      const big = 'b'.repeat(limit - 30);
      assert.match(errorOf(await memory({ target: 'user', action: 'add', content: big })).error, /limit is/);
      const swapped = jsonOf(
        await memory({
          target: 'user',
          operations: [
            { action: 'add', content: big },
            { action: 'remove', old_text: 'aaaa' },
          ],
        }),
      );
      assert.deepEqual(swapped.entries, [big]);
    });
  });

  describe('skill_manage', () => {
    it('write_file adds a supporting file, remove_file deletes it; paths outside the allowed folders are refused', async (t) => {
      const root = mkdtempSync(join(tmpdir(), 'traj-skills-'));
      t.after(() => rmSync(root, { recursive: true, force: true }));
      mkdirSync(join(root, 'csv'));
      writeFileSync(join(root, 'csv', 'SKILL.md'), '---\nname: csv\ndescription: CSV work.\n---\nSteps.\n');
      const state = new Map<string, unknown>([
        [SKILLS_STATE_KEY, new SkillLibrary([{ folder: root, writable: true }])],
      ]);
      const manage = (args: Record<string, unknown>) =>
        callTool('skill_manage', { name: 'csv', ...args }, toolContext(sandbox, { state }));
      assert.deepEqual(
        jsonOf(await manage({ action: 'write_file', file_path: 'references/sep.md', file_content: 'Use sep=";".\n' })),
        { success: true, written: 'references/sep.md' },
      );
      assert.equal(readFileSync(join(root, 'csv', 'references', 'sep.md'), 'utf8'), 'Use sep=";".\n');
      const viewed = jsonOf(
        await callTool('skill_view', { name: 'csv', file_path: 'references/sep.md' }, toolContext(sandbox, { state })),
      );
      assert.equal(viewed.content, 'Use sep=";".\n');
      const outside = errorOf(await manage({ action: 'write_file', file_path: '../escape.md', file_content: 'x' }));
      assert.equal(outside.error, "'../escape.md' is not a supporting file of the skill");
      assert.equal(existsSync(join(root, 'escape.md')), false);
      assert.match(errorOf(await manage({ action: 'write_file', file_path: 'references/x.md' })).error, /file_content/);
      assert.deepEqual(jsonOf(await manage({ action: 'remove_file', file_path: 'references/sep.md' })), {
        success: true,
        removed: 'references/sep.md',
      });
      assert.equal(existsSync(join(root, 'csv', 'references', 'sep.md')), false);
      assert.match(
        errorOf(await manage({ action: 'remove_file', file_path: 'references/sep.md' })).error,
        /has no file 'references\/sep\.md'/,
      );
    });
  });
});
