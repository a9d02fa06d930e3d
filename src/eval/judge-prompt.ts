import type { Message } from '../model/messages.js';

/** What one judge grades. */
export interface JudgeRequest {
  rubric: string;
  /** The task as the policy saw it. */
  prompt: string;
  /** The policy's answer. */
  response: string;
  reference?: string;
  scale: { min: number; max: number };
  /** Which of N independent gradings this is (a judge scorer's majority over N); 0 or absent: the only one. */
  sample?: number;
}

/** The judge's instructions and the material to grade; the same text in structured and text mode. */
export function judgeMessages(request: JudgeRequest): Message[] {
  const { min, max } = request.scale;
  const system = [
    'You are a careful, strict grader. Grade the RESPONSE to the TASK against the RUBRIC.',
    `Give a score from ${min} (worst) to ${max} (best), and pass = true only when the response satisfies the rubric.`,
    'Reply with one JSON object and nothing else: {"reasoning": "<a few sentences citing the rubric>", "score": <number>, "pass": <true|false>}.',
  ].join('\n');
  const parts = [`<RUBRIC>\n${request.rubric.trim()}\n</RUBRIC>`, `<TASK>\n${request.prompt.trim()}\n</TASK>`];
  if (request.reference !== undefined)
    parts.push(`<REFERENCE_ANSWER>\n${request.reference.trim()}\n</REFERENCE_ANSWER>`);
  parts.push(`<RESPONSE>\n${request.response.trim()}\n</RESPONSE>`);
  return [
    { role: 'system', content: system },
    { role: 'user', content: parts.join('\n\n') },
  ];
}

/** The follow-up turn after an unusable answer: what was wrong, and the format again. */
export function correctionMessage(problem: string): Message {
  return {
    role: 'user',
    content: `Your reply could not be used: ${problem}. Reply again with only the JSON object {"reasoning": string, "score": number, "pass": boolean}.`,
  };
}

/**
 * The JSON object in a free-text answer: a ```json fenced block if there is one, else the last
 * {...} that parses (the outermost one ending at the last closing brace that works). Undefined when there is none.
 */
export function extractJsonObject(text: string): unknown {
  const fenced = [...text.matchAll(/```(?:json)?\s*\n([\s\S]*?)```/g)].map((match) => match[1]!);
  for (const block of fenced.reverse()) {
    const parsed = tryParse(block.trim());
    if (isObject(parsed)) return parsed;
  }
  for (let end = text.lastIndexOf('}'); end !== -1; end = text.lastIndexOf('}', end - 1)) {
    for (let start = text.indexOf('{'); start !== -1 && start < end; start = text.indexOf('{', start + 1)) {
      const parsed = tryParse(text.slice(start, end + 1));
      if (isObject(parsed)) return parsed;
    }
  }
  return undefined;
}

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
