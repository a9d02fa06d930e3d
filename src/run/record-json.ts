import { randomUUID } from 'node:crypto';

/**
 * A record's JSON as UTF-8 bytes, the same bytes as `Buffer.from(JSON.stringify(record))`, with the
 * two values most records of a run share encoded once per process: the tool specs (`tools`) and
 * the ShareGPT system turn, which repeats them. Those are ~13 KB of a ~15 KB record. Serializing
 * them per record was most of the store's CPU, and their "—" made every record a two-byte string
 * that SQLite's binding flattened and re-encoded (~60 KB of garbage per record).
 */
export class RecordJson {
  /** Stand in for the shared values while the rest is stringified. Random, so no record text contains them. */
  private readonly toolsMarker = `\u0001${randomUUID()}`;
  private readonly systemMarker = `\u0001${randomUUID()}`;
  /** The stand-ins as they appear in the stringified record. */
  private readonly quotedTools = JSON.stringify(this.toolsMarker);
  private readonly quotedSystem = JSON.stringify(this.systemMarker);
  /** The pool hands every record of a tool set the same array, and never changes it. */
  private readonly toolsBytes = new WeakMap<object, Buffer>();
  private readonly systemBytes = new Map<string, Buffer>();

  encode(record: object): Buffer {
    const shared = this.sharedParts(record);
    if (!shared) return Buffer.from(JSON.stringify(record));
    const text = JSON.stringify({
      ...record,
      tools: this.toolsMarker,
      conversations: [{ from: 'system', value: this.systemMarker }, ...shared.conversations.slice(1)],
    });
    const parts = [
      { marker: this.quotedTools, bytes: this.tools(shared.tools) },
      { marker: this.quotedSystem, bytes: this.system(shared.system) },
    ]
      .map((part) => ({ ...part, at: text.indexOf(part.marker) }))
      .sort((a, b) => a.at - b.at);
    const pieces: Buffer[] = [];
    let from = 0;
    for (const part of parts) {
      pieces.push(Buffer.from(text.slice(from, part.at)), part.bytes);
      from = part.at + part.marker.length;
    }
    pieces.push(Buffer.from(text.slice(from)));
    return Buffer.concat(pieces);
  }

  private sharedParts(record: object) {
    const { tools, conversations } = record as { tools?: unknown; conversations?: unknown };
    if (!Array.isArray(tools) || !Array.isArray(conversations)) return undefined;
    const system = conversations[0] as { from?: unknown; value?: unknown } | undefined;
    if (system?.from !== 'system' || typeof system.value !== 'string') return undefined;
    if (Object.keys(system).join() !== 'from,value') return undefined;
    return { tools, conversations, system: system.value };
  }

  private tools(tools: unknown[]): Buffer {
    let bytes = this.toolsBytes.get(tools);
    if (!bytes) {
      bytes = Buffer.from(JSON.stringify(tools));
      this.toolsBytes.set(tools, bytes);
    }
    return bytes;
  }

  private system(value: string): Buffer {
    let bytes = this.systemBytes.get(value);
    if (!bytes) {
      // A run has a few distinct system turns (one per tool set); a bound keeps an odd run small.
      if (this.systemBytes.size >= 64) this.systemBytes.clear();
      bytes = Buffer.from(JSON.stringify(value));
      this.systemBytes.set(value, bytes);
    }
    return bytes;
  }
}
