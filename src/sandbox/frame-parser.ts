/**
 * The Node side of the frames the zygote and the init speak (perl-frames.ts): `TYPE ID LENGTH\n`,
 * then LENGTH bytes.
 */
export function encodeFrame(type: string, id: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  return Buffer.concat([Buffer.from(`${type} ${id} ${payload.length}\n`), payload]);
}

/** Splits a byte stream into frames, keeping a partial one until the rest arrives. */
export class FrameParser {
  private input: Buffer = Buffer.alloc(0);

  constructor(private readonly onFrame: (type: string, id: number, payload: Buffer) => void) {}

  push(chunk: Buffer): void {
    this.input = this.input.length === 0 ? chunk : Buffer.concat([this.input, chunk]);
    for (;;) {
      const newline = this.input.indexOf(10);
      if (newline < 0) return;
      const [type, idText, lengthText] = this.input.subarray(0, newline).toString('latin1').split(' ');
      const length = Number(lengthText);
      if (this.input.length < newline + 1 + length) return;
      const payload = this.input.subarray(newline + 1, newline + 1 + length);
      this.input = this.input.subarray(newline + 1 + length);
      this.onFrame(type ?? '', Number(idText), payload);
    }
  }
}
