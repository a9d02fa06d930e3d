/**
 * The final number of a math answer, normalised ("1,234.50" → "1234.5", "$18" → "18", "-3.0" → "-3"):
 * the `#### N` marker if present, else a `\boxed{N}`, else an "answer is N" phrase, else the last
 * number in the text. Undefined when the text holds no number.
 */
export function extractFinalNumber(text: string): string | undefined {
  const marked =
    /####\s*([^\n]+)/.exec(text)?.[1] ??
    lastMatch(text, /\\boxed\{([^{}]+)\}/g) ??
    lastMatch(text, /answer\s*(?:is|:)\s*([^\n]+)/gi);
  const candidates = marked !== undefined ? numbersIn(marked) : [];
  const chosen = candidates[0] ?? numbersIn(text).at(-1);
  return chosen === undefined ? undefined : normalizeNumber(chosen);
}

function lastMatch(text: string, pattern: RegExp): string | undefined {
  return [...text.matchAll(pattern)].at(-1)?.[1];
}

/** Numbers as written: optional sign, digits with thousands commas, optional decimals. */
function numbersIn(text: string): string[] {
  return [...text.matchAll(/-?\$?\s?\d[\d,]*(?:\.\d+)?|-?\$?\.\d+/g)].map((match) => match[0]);
}

/** "1,234.50" → "1234.5"; "$-3.0" → "-3"; ".5" → "0.5". */
export function normalizeNumber(raw: string): string | undefined {
  const cleaned = raw.replace(/[$,\s]/g, '');
  const value = Number(cleaned);
  if (!Number.isFinite(value)) return undefined;
  return String(value);
}

/** True when both texts hold the same final number. */
export function sameNumber(answer: string, reference: string): boolean {
  const expected = extractFinalNumber(reference);
  return expected !== undefined && extractFinalNumber(answer) === expected;
}
