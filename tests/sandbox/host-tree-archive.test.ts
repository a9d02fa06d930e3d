import { test } from 'node:test';
import assert from 'node:assert/strict';
import { linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import tar from 'tar-stream';
import { addHostTree, extractTree, forEachEntry } from '../../src/sandbox/docker-archive.js';

/** A tree whose large file has two names (as npm's installer leaves some binaries), under one top folder. */
function packTree(root: string): Readable {
  const pack = tar.pack();
  (async () => {
    // Two calls sharing one map, as a build context's top-level entries are packed.
    const links = new Map<string, string>();
    for (const child of ['bin', 'lib']) await addHostTree(pack, `tree/${child}`, join(root, child), links);
    pack.finalize();
  })().catch((error: unknown) => pack.destroy(error as Error));
  return pack as unknown as Readable;
}

test('a file with two names is packed once, its second name a hard link, and unpacks as one file', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'traj-host-tree-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'bin'));
  mkdirSync(join(root, 'lib'));
  const body = Buffer.alloc(256 * 1024, 7);
  writeFileSync(join(root, 'lib', 'agent-binary'), body, { mode: 0o755 });
  linkSync(join(root, 'lib', 'agent-binary'), join(root, 'bin', 'agent'));
  writeFileSync(join(root, 'lib', 'single.txt'), 'one name');

  const entries: Array<{ name: string; type: string | undefined; size: number | undefined; linkname?: string }> = [];
  await forEachEntry(packTree(root), async (header, stream) => {
    entries.push({ name: header.name, type: header.type, size: header.size, linkname: header.linkname ?? undefined });
    stream.resume();
  });
  const files = entries.filter((entry) => entry.type === 'file');
  assert.deepEqual(files.map((entry) => entry.name).sort(), ['tree/bin/agent', 'tree/lib/single.txt']);
  assert.deepEqual(
    entries.find((entry) => entry.name === 'tree/lib/agent-binary'),
    { name: 'tree/lib/agent-binary', type: 'link', size: 0, linkname: 'tree/bin/agent' },
  );

  const out = join(root, 'out');
  await extractTree(packTree(root), out);
  assert.deepEqual(readFileSync(join(out, 'lib', 'agent-binary')), body);
  assert.equal(statSync(join(out, 'lib', 'agent-binary')).ino, statSync(join(out, 'bin', 'agent')).ino);
  assert.equal(readFileSync(join(out, 'lib', 'single.txt'), 'utf8'), 'one name');
});
