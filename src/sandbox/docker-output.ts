import { Writable } from 'node:stream';
import { CappedBuffer } from './capped-buffer.js';

/**
 * One demultiplexed output stream of a command, as a Writable for dockerode's demuxer: the same
 * bounded buffer and truncation note as the local backend (the command keeps running; only what
 * we keep is bounded).
 */
export class CappedOutput extends Writable {
  private readonly buffer: CappedBuffer;

  constructor(limit: number) {
    super();
    this.buffer = new CappedBuffer(limit);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.buffer.push(chunk);
    done();
  }

  /** The raw kept bytes (used to recognise the runtime's own failure messages). */
  bytes(): Buffer {
    return this.buffer.bytes();
  }

  text(): string {
    return this.buffer.text();
  }
}
