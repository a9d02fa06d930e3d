import { ConfigError } from '../errors.js';

/**
 * The `--filter` language: a small, safe expression language over record fields, parsed by hand
 * (never eval). Grammar, loosest binding first:
 *
 *   expression := and ('or' and)*
 *   and        := unary ('and' unary)*
 *   unary      := 'not' unary | comparison
 *   comparison := value (('==' | '!=' | '<' | '<=' | '>' | '>=' | 'contains' | 'in') value)?
 *   value      := field | string | number | true | false | null | list | 'len' '(' value ')' | '(' expression ')'
 *   field      := name ('.' (name | index))*      e.g. usage.prompt_tokens, tool_stats.name, messages.0.role
 *   list       := '[' (value (',' value)*)? ']'
 */
export type FilterValue =
  | { kind: 'field'; path: Array<string | number>; position: number }
  | { kind: 'literal'; value: string | number | boolean | null }
  | { kind: 'list'; items: FilterValue[] }
  | { kind: 'length'; of: FilterValue };

export type ComparisonOperator = '==' | '!=' | '<' | '<=' | '>' | '>=' | 'contains' | 'in';

export type FilterExpression =
  | { kind: 'or' | 'and'; left: FilterExpression; right: FilterExpression }
  | { kind: 'not'; operand: FilterExpression }
  | { kind: 'compare'; operator: ComparisonOperator; left: FilterValue; right: FilterValue }
  | { kind: 'test'; value: FilterValue };

type TokenKind = 'name' | 'string' | 'number' | 'operator' | 'punctuation' | 'end';

interface Token {
  kind: TokenKind;
  text: string;
  /** 0-based offset in the expression. */
  position: number;
  value?: string | number;
}

const OPERATORS = ['==', '!=', '<=', '>=', '<', '>'];
const PUNCTUATION = new Set(['(', ')', '[', ']', ',', '.', '-']);
const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', '"': '"', "'": "'" };

/** Why a filter cannot be parsed, with the expression and a caret under the offending position. */
export function filterError(source: string, position: number, message: string): ConfigError {
  return new ConfigError(`--filter: ${message} at position ${position + 1}\n  ${source}\n  ${' '.repeat(position)}^`, {
    code: 'invalid_filter',
    details: { filter: source, position: position + 1 },
  });
}

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let index = 0;
  while (index < source.length) {
    const char = source[index]!;
    if (/\s/.test(char)) {
      index++;
      continue;
    }
    const start = index;
    if (/[A-Za-z_]/.test(char)) {
      while (index < source.length && /\w/.test(source[index]!)) index++;
      tokens.push({ kind: 'name', text: source.slice(start, index), position: start });
    } else if (/[0-9]/.test(char)) {
      const match = /^\d+(\.\d+)?([eE][+-]?\d+)?/.exec(source.slice(index))!;
      index += match[0].length;
      tokens.push({ kind: 'number', text: match[0], position: start, value: Number(match[0]) });
    } else if (char === '"' || char === "'") {
      const [value, end] = readString(source, index);
      index = end;
      tokens.push({ kind: 'string', text: source.slice(start, index), position: start, value });
    } else {
      const operator = OPERATORS.find((candidate) => source.startsWith(candidate, index));
      if (operator) {
        index += operator.length;
        tokens.push({ kind: 'operator', text: operator, position: start });
      } else if (PUNCTUATION.has(char)) {
        index++;
        tokens.push({ kind: 'punctuation', text: char, position: start });
      } else if (char === '=') {
        throw filterError(source, start, "'=' is not an operator (use '==' to compare)");
      } else {
        throw filterError(source, start, `unexpected character '${char}'`);
      }
    }
  }
  tokens.push({ kind: 'end', text: 'the end', position: source.length });
  return tokens;
}

function readString(source: string, start: number): [string, number] {
  const quote = source[start]!;
  let value = '';
  let index = start + 1;
  while (index < source.length) {
    const char = source[index]!;
    if (char === quote) return [value, index + 1];
    if (char === '\\') {
      const next = source[index + 1] ?? '';
      const escaped = Object.hasOwn(ESCAPES, next) ? ESCAPES[next] : undefined;
      if (escaped === undefined)
        throw filterError(source, index, `unknown escape '\\${source[index + 1] ?? ''}' in a string`);
      value += escaped;
      index += 2;
    } else {
      value += char;
      index++;
    }
  }
  throw filterError(source, start, 'a string that is never closed');
}

const COMPARISON_WORDS = new Set(['contains', 'in']);
const RESERVED = new Set(['and', 'or', 'not', 'contains', 'in', 'true', 'false', 'null', 'len']);

class Parser {
  private index = 0;

  constructor(
    private readonly source: string,
    private readonly tokens: Token[],
    private readonly fields: ReadonlySet<string>,
  ) {}

  parse(): FilterExpression {
    if (this.peek().kind === 'end') throw filterError(this.source, 0, 'an empty expression');
    const expression = this.or();
    const next = this.peek();
    if (next.kind !== 'end')
      throw filterError(this.source, next.position, `expected 'and', 'or' or the end, found '${next.text}'`);
    return expression;
  }

  private peek(): Token {
    return this.tokens[this.index]!;
  }

  private advance(): Token {
    return this.tokens[this.index++]!;
  }

  private isWord(word: string): boolean {
    const token = this.peek();
    return token.kind === 'name' && token.text === word;
  }

  private isPunctuation(text: string): boolean {
    const token = this.peek();
    return token.kind === 'punctuation' && token.text === text;
  }

  private expectPunctuation(text: string, after: string): void {
    const token = this.peek();
    if (!this.isPunctuation(text))
      throw filterError(this.source, token.position, `expected '${text}' ${after}, found ${describe(token)}`);
    this.advance();
  }

  private or(): FilterExpression {
    let left = this.and();
    while (this.isWord('or')) {
      this.advance();
      left = { kind: 'or', left, right: this.and() };
    }
    return left;
  }

  private and(): FilterExpression {
    let left = this.unary();
    while (this.isWord('and')) {
      this.advance();
      left = { kind: 'and', left, right: this.unary() };
    }
    return left;
  }

  private unary(): FilterExpression {
    if (this.isWord('not')) {
      this.advance();
      return { kind: 'not', operand: this.unary() };
    }
    return this.comparison();
  }

  private comparison(): FilterExpression {
    if (this.isPunctuation('(')) {
      const nested = this.parenthesizedExpression();
      if (nested) return nested;
    }
    const left = this.value();
    const token = this.peek();
    const operator =
      token.kind === 'operator'
        ? token.text
        : token.kind === 'name' && COMPARISON_WORDS.has(token.text)
          ? token.text
          : undefined;
    if (!operator) return { kind: 'test', value: left };
    this.advance();
    if (this.peek().kind === 'end')
      throw filterError(this.source, this.peek().position, `expected a value after '${operator}'`);
    return { kind: 'compare', operator: operator as ComparisonOperator, left, right: this.value() };
  }

  /**
   * A '(' opens a nested expression unless it only wraps a value that a comparison follows,
   * e.g. `(reward) >= 1`; the nested form is tried first and kept when it is a whole expression.
   */
  private parenthesizedExpression(): FilterExpression | undefined {
    const start = this.index;
    this.advance();
    const expression = this.or();
    this.expectPunctuation(')', 'to close the parenthesis');
    const next = this.peek();
    const continues = next.kind === 'operator' || (next.kind === 'name' && COMPARISON_WORDS.has(next.text));
    if (continues) {
      this.index = start;
      return undefined;
    }
    return expression;
  }

  private value(): FilterValue {
    const token = this.peek();
    if (token.kind === 'string' || token.kind === 'number') {
      this.advance();
      return { kind: 'literal', value: token.value! };
    }
    if (token.kind === 'punctuation') return this.punctuationValue(token);
    if (token.kind === 'name') return this.nameValue(token);
    throw filterError(
      this.source,
      token.position,
      `expected a field, a string, a number, true, false, null or a list, found ${describe(token)}`,
    );
  }

  private punctuationValue(token: Token): FilterValue {
    if (token.text === '-') {
      this.advance();
      const number = this.peek();
      if (number.kind !== 'number')
        throw filterError(this.source, number.position, `expected a number after '-', found ${describe(number)}`);
      this.advance();
      return { kind: 'literal', value: -(number.value as number) };
    }
    if (token.text === '[') return this.list();
    if (token.text === '(') {
      this.advance();
      const inner = this.value();
      this.expectPunctuation(')', 'to close the parenthesis');
      return inner;
    }
    throw filterError(this.source, token.position, `expected a value, found '${token.text}'`);
  }

  private list(): FilterValue {
    this.advance();
    const items: FilterValue[] = [];
    if (!this.isPunctuation(']')) {
      items.push(this.value());
      while (this.isPunctuation(',')) {
        this.advance();
        items.push(this.value());
      }
    }
    this.expectPunctuation(']', 'to close the list');
    return { kind: 'list', items };
  }

  private nameValue(token: Token): FilterValue {
    const literals: Record<string, boolean | null> = { true: true, false: false, null: null };
    if (Object.hasOwn(literals, token.text)) {
      this.advance();
      return { kind: 'literal', value: literals[token.text]! };
    }
    if (token.text === 'len') {
      this.advance();
      this.expectPunctuation('(', "after 'len'");
      const of = this.value();
      this.expectPunctuation(')', "to close 'len('");
      return { kind: 'length', of };
    }
    if (RESERVED.has(token.text))
      throw filterError(this.source, token.position, `expected a value, found the keyword '${token.text}'`);
    return this.field(token);
  }

  private field(token: Token): FilterValue {
    if (!this.fields.has(token.text)) {
      throw filterError(
        this.source,
        token.position,
        `unknown field '${token.text}' (fields: ${[...this.fields].join(', ')})`,
      );
    }
    this.advance();
    const path: Array<string | number> = [token.text];
    while (this.isPunctuation('.')) {
      this.advance();
      const segment = this.peek();
      if (segment.kind === 'name') path.push(segment.text);
      else if (segment.kind === 'number' && Number.isInteger(segment.value)) path.push(segment.value as number);
      else
        throw filterError(
          this.source,
          segment.position,
          `expected a field name or an index after '.', found ${describe(segment)}`,
        );
      this.advance();
    }
    return { kind: 'field', path, position: token.position };
  }
}

function describe(token: Token): string {
  return token.kind === 'end' ? 'the end' : `'${token.text}'`;
}

/** Parse a filter; `fields` are the top-level names a field path may start with. */
export function parseFilter(source: string, fields: ReadonlySet<string>): FilterExpression {
  return new Parser(source, tokenize(source), fields).parse();
}
