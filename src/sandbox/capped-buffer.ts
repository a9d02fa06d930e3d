/** Keeps the first `limit` bytes of a command's output stream and counts the rest. */
export class CappedBuffer {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private dropped = 0;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    const room = this.limit - this.kept;
    if (room <= 0) {
      this.dropped += chunk.length;
      return;
    }
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.chunks.push(part);
    this.kept += part.length;
    this.dropped += chunk.length - part.length;
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }

  /** The kept text, with a note saying how much was dropped (both backends say it the same way). */
  text(): string {
    const text = this.bytes().toString('utf8');
    return this.dropped > 0 ? `${text}\n[output truncated: ${this.dropped} more bytes dropped]` : text;
  }
}
