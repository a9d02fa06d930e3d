/**
 * JSON parsed the way Python's `json.loads` keeps it, for re-serialising with `pythonJson`: a
 * number keeps its kind (int or float) and an int its exact digits, so `{"x": 2.0}` comes back
 * as `2.0` and 2**64 stays exact, as Python writes them. Input must already be valid JSON.
 */
export class PythonNumber {
  constructor(readonly text: string) {}

  /** The number as Python's `json.dumps` writes it (`repr` of an int or a float). */
  toPython(): string {
    if (/^-?\d+$/.test(this.text)) return BigInt(this.text).toString();
    return pythonFloat(Number(this.text));
  }
}

/** Python's `repr(float)`: the shortest round-trip digits; exponent form below 1e-4 and from 1e16. */
export function pythonFloat(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity';
  if (Object.is(value, -0)) return '-0.0';
  const [mantissa, exponentText] = value.toExponential().split('e') as [string, string];
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 16) {
    const sign = exponent < 0 ? '-' : '+';
    return `${mantissa}e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  const plain = value.toFixed(Math.max(0, mantissa.replace(/^-?\d\.?/, '').length - exponent));
  return plain.includes('.') ? plain : `${plain}.0`;
}

/** Parse JSON text (already known to be valid) with numbers as PythonNumber. */
export function parsePythonJson(text: string): unknown {
  const parser = { text, at: 0 };
  const value = parseValue(parser);
  return value;
}

interface Parser {
  text: string;
  at: number;
}

function skipSpace(parser: Parser): void {
  while (/[ \t\n\r]/.test(parser.text[parser.at] ?? '')) parser.at++;
}

function parseValue(parser: Parser): unknown {
  skipSpace(parser);
  const char = parser.text[parser.at];
  if (char === '{') return parseObject(parser);
  if (char === '[') return parseArray(parser);
  if (char === '"') return parseString(parser);
  const literal = /^(true|false|null|-?\d+(\.\d+)?([eE][+-]?\d+)?)/.exec(
    parser.text.slice(parser.at, parser.at + 400),
  )![0];
  parser.at += literal.length;
  if (literal === 'true') return true;
  if (literal === 'false') return false;
  if (literal === 'null') return null;
  return new PythonNumber(literal);
}

function parseString(parser: Parser): string {
  const start = parser.at;
  parser.at++;
  while (parser.text[parser.at] !== '"') parser.at += parser.text[parser.at] === '\\' ? 2 : 1;
  parser.at++;
  return JSON.parse(parser.text.slice(start, parser.at)) as string;
}

function parseArray(parser: Parser): unknown[] {
  parser.at++;
  const items: unknown[] = [];
  skipSpace(parser);
  if (parser.text[parser.at] === ']') {
    parser.at++;
    return items;
  }
  for (;;) {
    items.push(parseValue(parser));
    skipSpace(parser);
    if (parser.text[parser.at++] === ']') return items;
  }
}

function parseObject(parser: Parser): Record<string, unknown> {
  parser.at++;
  // A null-prototype object: a "__proto__" key is data here, as it is in Python.
  const object = Object.create(null) as Record<string, unknown>;
  skipSpace(parser);
  if (parser.text[parser.at] === '}') {
    parser.at++;
    return object;
  }
  for (;;) {
    skipSpace(parser);
    const key = parseString(parser);
    skipSpace(parser);
    parser.at++;
    // Python keeps a repeated key at its first position with the last value; so does assignment.
    object[key] = parseValue(parser);
    skipSpace(parser);
    if (parser.text[parser.at++] === '}') return object;
  }
}
