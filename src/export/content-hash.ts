import { createHash } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';

export interface FileDigests {
  size: number;
  /** What the Hub shows as an LFS file's oid. */
  sha256: string;
  /** The git blob id, what the Hub shows as a regular file's oid. */
  gitSha1: string;
}

/** Both digests the Hub can report for a file, in one streamed read. */
export async function fileDigests(path: string): Promise<FileDigests> {
  const size = statSync(path).size;
  const sha256 = createHash('sha256');
  const gitSha1 = createHash('sha1').update(`blob ${size}\0`);
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    sha256.update(chunk);
    gitSha1.update(chunk);
  }
  return { size, sha256: sha256.digest('hex'), gitSha1: gitSha1.digest('hex') };
}
