import { Writable } from 'node:stream';

/**
 * One demultiplexed output stream of a command: keeps the first `limit` bytes, counts the rest
 * (the command keeps running; only what we keep is bounded), and notes the truncation the way
 * the local backend does.
 */
export class CappedOutput extends Writable {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private dropped = 0;

  constructor(private readonly limit: number) {
    super();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    const room = this.limit - this.kept;
    if (room <= 0) {
      this.dropped += chunk.length;
    } else {
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      this.chunks.push(part);
      this.kept += part.length;
      this.dropped += chunk.length - part.length;
    }
    done();
  }

  /** The raw kept bytes (used to recognise the runtime's own failure messages). */
  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }

  text(): string {
    const text = this.bytes().toString('utf8');
    return this.dropped > 0 ? `${text}\n[output truncated: ${this.dropped} more bytes dropped]` : text;
  }
}
