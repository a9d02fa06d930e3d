import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ArtifactSink } from '../tools/services.js';

/**
 * One rollout's artifact folder, `<artifacts dir>/<sha256(key) prefix>-<sample>/`: the key may
 * hold any character, the hash keeps the path short and safe. Files are numbered in the order
 * written, so a rerun of the rollout overwrites its own files and never another rollout's.
 */
export function rolloutArtifacts(
  root: string | undefined,
  key: string,
  sample: number,
): { sink?: ArtifactSink; paths: string[] } {
  const paths: string[] = [];
  if (!root) return { paths };
  // Named on the first save: most rollouts keep no file, and a hash per rollout is not free.
  let folder: string | undefined;
  const sink: ArtifactSink = {
    async save(name, data) {
      folder ??= join(root, `${createHash('sha256').update(key).digest('hex').slice(0, 16)}-${sample}`);
      const safe = name.replace(/[^\w.-]/g, '_').replace(/^\.+/, '') || 'artifact';
      const path = join(folder, `${String(paths.length + 1).padStart(3, '0')}-${safe}`);
      paths.push(path);
      await mkdir(folder, { recursive: true });
      await writeFile(path, data);
      return path;
    },
  };
  return { sink, paths };
}
