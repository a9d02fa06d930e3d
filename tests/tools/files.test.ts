import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { createLocalSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { callTool, errorOf, jsonOf, toolContext } from './tool-context.js';

describe('file tools', () => {
  let sandbox: Sandbox;
  const context = () => toolContext(sandbox);
  const text = async (name: string, args: unknown) => {
    const outcome = await callTool(name, args, context());
    assert.equal(outcome.ok, true, outcome.content);
    return outcome.content;
  };

  before(async () => {
    sandbox = await createLocalSandbox();
    await sandbox.writeFile(
      'numbers.txt',
      `${Array.from({ length: 12 }, (_, index) => `line ${index + 1}`).join('\n')}\n`,
    );
  });
  after(async () => {
    await sandbox.dispose();
  });

  describe('read_file', () => {
    it('shows numbered lines from offset, limit lines at a time, saying what remains', async () => {
      assert.equal(
        await text('read_file', { path: 'numbers.txt', offset: 3, limit: 2 }),
        '3|line 3\n4|line 4\n[lines 3-4 of 12; 8 more — call read_file with offset 5 to continue]',
      );
      const rest = await text('read_file', { path: 'numbers.txt', offset: 11 });
      assert.equal(rest, '11|line 11\n12|line 12');
    });

    it('reads a whole short file, with or without a final newline', async () => {
      await sandbox.writeFile('short.txt', 'a\n\nc');
      assert.equal(await text('read_file', { path: 'short.txt' }), '1|a\n2|\n3|c');
      await sandbox.writeFile('empty.txt', '');
      assert.equal(await text('read_file', { path: 'empty.txt' }), '[empty.txt is empty]');
    });

    it('an offset past the end, a missing file and a binary file are readable errors', async () => {
      const past = errorOf(await callTool('read_file', { path: 'numbers.txt', offset: 13 }, context()));
      assert.match(past.error, /offset 13 is past the end of 'numbers.txt', which has 12 lines/);
      const missing = errorOf(await callTool('read_file', { path: 'nope/missing.txt' }, context()));
      assert.match(missing.error, /no such file: 'nope\/missing\.txt'/);
      assert.match(missing.hint ?? '', /search_files/);
      await sandbox.writeFile('blob.bin', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x00, 0x01]));
      const binary = errorOf(await callTool('read_file', { path: 'blob.bin' }, context()));
      assert.match(binary.error, /'blob\.bin' is a binary file \(6 bytes\)/);
      assert.match(binary.hint ?? '', /terminal/);
    });

    it('cuts a very long line', async () => {
      await sandbox.writeFile('wide.txt', `${'w'.repeat(2_500)}\n`);
      assert.equal(
        await text('read_file', { path: 'wide.txt' }),
        `1|${'w'.repeat(2_000)} [... 500 more characters on this line]`,
      );
    });
  });

  describe('write_file', () => {
    it('creates parent folders, reports the bytes written and replaces existing files', async () => {
      const result = jsonOf(
        await callTool('write_file', { path: 'new/deep/dir/note.md', content: 'héllo\n' }, context()),
      );
      assert.deepEqual(result, { path: 'new/deep/dir/note.md', bytes_written: 7 });
      assert.equal((await sandbox.readFile('new/deep/dir/note.md')).toString(), 'héllo\n');
      await text('write_file', { path: 'new/deep/dir/note.md', content: 'v2' });
      assert.equal((await sandbox.readFile('new/deep/dir/note.md')).toString(), 'v2');
    });
  });

  describe('patch', () => {
    const source = 'def add(a, b):\n    return a - b\n\ndef sub(a, b):\n    return a - b\n';
    const replace = (args: Record<string, unknown>) => callTool('patch', { mode: 'replace', ...args }, context());

    it('replaces one exact occurrence and shows the changed region as a diff', async () => {
      await sandbox.writeFile('calc.py', source);
      const result = jsonOf(
        await replace({
          path: 'calc.py',
          old_string: 'def add(a, b):\n    return a - b',
          new_string: 'def add(a, b):\n    return a + b  # $& kept literally',
        }),
      );
      assert.equal(result.success, true);
      assert.deepEqual(result.files_modified, ['calc.py']);
      assert.deepEqual([result.files_created, result.files_deleted], [[], []]);
      assert.equal(
        result.diff,
        [
          '--- a/calc.py',
          '+++ b/calc.py',
          '@@ -1,5 +1,5 @@',
          ' def add(a, b):',
          '-    return a - b',
          '+    return a + b  # $& kept literally',
          ' ',
          ' def sub(a, b):',
          '     return a - b',
          '',
        ].join('\n'),
      );
      assert.equal(
        (await sandbox.readFile('calc.py')).toString(),
        source.replace('a - b', 'a + b  # $$& kept literally'),
      );
    });

    it('old_string matching more than once says how many times and where, changing nothing', async () => {
      await sandbox.writeFile('calc.py', source);
      const { error, hint } = errorOf(
        await replace({ path: 'calc.py', old_string: 'return a - b', new_string: 'return 0' }),
      );
      assert.equal(error, "old_string matches 2 times in 'calc.py' (at lines 2, 5)");
      assert.match(hint ?? '', /more surrounding lines/);
      assert.match(hint ?? '', /replace_all=true/);
      assert.equal((await sandbox.readFile('calc.py')).toString(), source);
    });

    it('missing old_string is an error, while a match differing only in indentation is applied', async () => {
      await sandbox.writeFile('calc.py', source);
      const absent = errorOf(await replace({ path: 'calc.py', old_string: 'def mul', new_string: 'x' }));
      assert.equal(absent.error, "old_string was not found in 'calc.py'");
      assert.match(absent.hint ?? '', /read the file with read_file/);
      assert.equal((await sandbox.readFile('calc.py')).toString(), source);
      // Hermes' patch is fuzzy about whitespace: the lines match once each is trimmed.
      await replace({
        path: 'calc.py',
        old_string: 'def sub(a, b):\n  return a - b',
        new_string: 'def sub(a, b):\n    return b',
      });
      assert.equal(
        (await sandbox.readFile('calc.py')).toString(),
        'def add(a, b):\n    return a - b\n\ndef sub(a, b):\n    return b\n',
      );
    });

    it('deletes old_string when new_string is empty', async () => {
      await sandbox.writeFile('calc.py', source);
      await text('patch', {
        mode: 'replace',
        path: 'calc.py',
        old_string: '\ndef sub(a, b):\n    return a - b\n',
        new_string: '',
      });
      assert.equal((await sandbox.readFile('calc.py')).toString(), 'def add(a, b):\n    return a - b\n');
    });

    it('replace mode names the missing parameters', async () => {
      await sandbox.writeFile('calc.py', source);
      const { error } = errorOf(await replace({ path: 'calc.py', old_string: 'a - b' }));
      assert.equal(error, "mode='replace' needs new_string");
      assert.equal((await sandbox.readFile('calc.py')).toString(), source);
    });
  });

  describe('search_files', () => {
    before(async () => {
      for (let index = 1; index <= 8; index++)
        await sandbox.writeFile(
          `tree/src/module-${index}.ts`,
          `export const value${index} = ${index};\n// needle ${index}\n`,
        );
      await sandbox.writeFile('tree/docs/guide.md', 'a needle in the docs\nno match here\n');
      await sandbox.writeFile('tree/data.bin', Buffer.from('a needle\0binary'));
      await sandbox.writeFile('tree/.git/config', 'a needle in git internals\n');
    });

    it('finds content as path:line:text, skipping binary files and .git', async () => {
      const result = await text('search_files', { pattern: 'needle [0-9]+|a needle', path: 'tree', limit: 100 });
      const rows = result.split('\n').sort();
      assert.deepEqual(
        rows,
        [
          'tree/docs/guide.md:1:a needle in the docs',
          ...Array.from({ length: 8 }, (_, index) => `tree/src/module-${index + 1}.ts:2:// needle ${index + 1}`),
        ].sort(),
      );
    });

    it('stops at limit and says more exist', async () => {
      const rows = (await text('search_files', { pattern: 'needle', path: 'tree/src', limit: 3 })).split('\n');
      assert.equal(rows.length, 4);
      for (const row of rows.slice(0, 3)) assert.match(row, /^tree\/src\/module-\d\.ts:2:\/\/ needle \d$/);
      assert.equal(rows[3], '[lines 1-3 of 8; call again with offset 3 for more]');
    });

    it('searches the working directory by default, with paths relative to it', async () => {
      assert.equal(
        await text('search_files', { pattern: 'value7 =' }),
        'tree/src/module-7.ts:1:export const value7 = 7;',
      );
      assert.equal(
        await text('search_files', { pattern: 'no such text anywhere' }),
        "no matches for 'no such text anywhere' in '.'",
      );
    });

    it('finds files by name glob, folders marked with /, newest first and limited', async () => {
      // Hermes lists files by modification time, newest first: module-N is N minutes old.
      for (let index = 1; index <= 8; index++)
        await sandbox.exec(`touch -d '${index} minutes ago' tree/src/module-${index}.ts`);
      assert.equal(
        await text('search_files', { pattern: 'module-[1-3].ts', target: 'files' }),
        'tree/src/module-1.ts\ntree/src/module-2.ts\ntree/src/module-3.ts',
      );
      assert.equal(await text('search_files', { pattern: 'do*', target: 'files', path: 'tree' }), 'tree/docs/');
      const limited = (await text('search_files', { pattern: '*.ts', target: 'files', limit: 5 })).split('\n');
      assert.deepEqual(
        limited.slice(0, 5),
        [1, 2, 3, 4, 5].map((index) => `tree/src/module-${index}.ts`),
      );
      assert.equal(limited[5], '[files 1-5 of 8; call again with offset 5 for more]');
      assert.equal(await text('search_files', { pattern: 'src/**/*-8.ts', target: 'files' }), 'tree/src/module-8.ts');
      assert.equal(await text('search_files', { pattern: 'config', target: 'files' }), "no files for 'config' in '.'");
    });

    it('passes shell metacharacters in pattern and path through literally', async () => {
      await sandbox.writeFile('tricky/it\'s "quoted" $HOME.txt', "price: $(whoami) `id` it's\n");
      const hostile = ['$(touch pwned)', '`touch pwned`', "'; touch pwned; '", '"; touch pwned; "'];
      for (const pattern of hostile) {
        await callTool('search_files', { pattern, path: 'tricky' }, context());
        await callTool('search_files', { pattern, target: 'files' }, context());
        await callTool('search_files', { pattern: 'x', path: pattern }, context());
      }
      assert.equal(existsSync(`${sandbox.workdir}/pwned`), false);
      assert.equal(existsSync(`${sandbox.workdir}/tricky/pwned`), false);
      assert.equal(
        await text('search_files', { pattern: '\\$\\(whoami\\) `id`', path: 'tricky' }),
        'tricky/it\'s "quoted" $HOME.txt:1:price: $(whoami) `id` it\'s',
      );
      assert.equal(
        await text('search_files', { pattern: '*"quoted" $HOME*', target: 'files' }),
        'tricky/it\'s "quoted" $HOME.txt',
      );
    });

    it('a bad regex or a missing path is a readable error', async () => {
      assert.match(
        errorOf(await callTool('search_files', { pattern: 'unclosed(' }, context())).error,
        /search_files failed: grep: .*\(/,
      );
      assert.match(
        errorOf(await callTool('search_files', { pattern: 'x', path: 'absent' }, context())).error,
        /absent.*No such file or directory/,
      );
      assert.match(
        errorOf(await callTool('search_files', { pattern: 'x', target: 'files', path: 'absent' }, context())).error,
        /absent.*No such file or directory/,
      );
    });
  });

  it('paths outside the workdir are refused as readable tool errors', async () => {
    for (const [name, args] of [
      ['read_file', { path: '../../etc/passwd' }],
      ['read_file', { path: '/etc/passwd' }],
      ['write_file', { path: '../escaped.txt', content: 'x' }],
      ['patch', { mode: 'replace', path: '/etc/hostname', old_string: 'a', new_string: 'b' }],
    ] as const) {
      const { error, hint } = errorOf(await callTool(name, args, context()));
      assert.match(error, /is outside the sandbox workdir/, name);
      assert.match(hint ?? '', /inside the working directory/, name);
    }
    assert.equal(existsSync(`${sandbox.workdir}/../escaped.txt`), false);
  });
});
