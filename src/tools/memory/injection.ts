/**
 * Text that reads like an attempt to steer a future prompt. Memory and skills end up in the
 * system prompt of later sessions, so what a model (or a web page it read) writes there is
 * checked first; a match is refused with the reason, which the model reads.
 */
const INJECTION_PATTERNS: ReadonlyArray<{ pattern: RegExp; reason: string }> = [
  {
    pattern:
      /\b(?:ignore|disregard|forget|override)\b.{0,40}\b(?:previous|prior|above|earlier|all|system|your)\b.{0,20}\b(?:instructions?|prompts?|rules|guidelines)\b/i,
    reason: 'tells the reader to ignore its instructions',
  },
  {
    pattern:
      /\byou are now\b|\bact as (?:an? )?(?:unrestricted|jailbroken|different)\b|\bnew (?:system )?instructions?:/i,
    reason: 'tries to replace the persona or the instructions',
  },
  {
    pattern: /\b(?:do not|don't|never) (?:tell|inform|reveal to|let) (?:the )?user\b/i,
    reason: 'asks to hide something from the user',
  },
  {
    pattern: /<\|(?:im_start|im_end|system|endoftext)\|>|<\/?(?:system|tool_call|tool_response)>|\[\/?INST\]/i,
    reason: 'contains chat-template control tokens',
  },
  {
    pattern: /\b(?:exfiltrate|send (?:the )?(?:api[_ ]?keys?|secrets?|credentials|tokens?) to)\b/i,
    reason: 'asks to send secrets somewhere',
  },
  { pattern: /(?:curl|wget)\b[^\n|]*\|\s*(?:ba)?sh\b/i, reason: 'contains a download-and-run command' },
  {
    pattern: /[\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]/,
    reason: 'contains invisible or direction-changing characters',
  },
];

/** Why the text looks like a prompt injection, or undefined when it does not. */
export function injectionReason(text: string): string | undefined {
  return INJECTION_PATTERNS.find(({ pattern }) => pattern.test(text))?.reason;
}
