import { Transform, type TransformCallback, type Writable } from 'node:stream';

const HEADER_BYTES = 8;

/**
 * Splits the engine's multiplexed exec stream (frames of an 8-byte header — stream type 1
 * stdout / 2 stderr, 4-byte big-endian length — then the payload): stdout frames come out of
 * this Transform, so a pipeline keeps backpressure end to end (a 100 MB download never piles
 * up in memory); stderr frames go to `stderr`. A stream that does not start with a valid header
 * (the runtime's own error text) passes through as stdout, as docker-modem's demuxStream does.
 */
export class ExecDemultiplexer extends Transform {
  private pending: Buffer = Buffer.alloc(0);
  private raw = false;

  constructor(private readonly stderr: Writable) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    if (this.raw) {
      this.push(chunk);
      return done();
    }
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const waits: Promise<void>[] = [];
    while (this.pending.length >= HEADER_BYTES) {
      const type = this.pending[0]!;
      if (type > 2) {
        this.raw = true;
        this.push(this.pending);
        this.pending = Buffer.alloc(0);
        break;
      }
      const length = this.pending.readUInt32BE(4);
      if (this.pending.length < HEADER_BYTES + length) break;
      const payload = this.pending.subarray(HEADER_BYTES, HEADER_BYTES + length);
      this.pending = this.pending.subarray(HEADER_BYTES + length);
      if (type === 2) {
        if (!this.stderr.write(payload)) waits.push(new Promise((resume) => this.stderr.once('drain', resume)));
      } else {
        this.push(payload);
      }
    }
    if (waits.length === 0) return done();
    Promise.all(waits).then(() => done(), done);
  }

  override _flush(done: TransformCallback): void {
    // A stream cut mid-frame (the command was killed): keep the part of the payload that arrived.
    if (this.pending.length > HEADER_BYTES) {
      const payload = this.pending.subarray(HEADER_BYTES);
      if (this.pending[0] === 2) this.stderr.write(payload);
      else this.push(payload);
    }
    this.stderr.end();
    done();
  }
}
