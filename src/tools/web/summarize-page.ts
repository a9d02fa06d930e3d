import type { Endpoint } from '../../config/endpoint.js';
import type { ToolServices } from '../services.js';
import type { ExtractedPage } from './extracted-page.js';

/** Characters of a page the summariser is sent at most (a long PDF must not overflow its context). */
const SUMMARIZER_INPUT_CHARS = 100_000;

/**
 * A long page summarised by the auxiliary summariser, keeping its source URL in the text; undefined
 * when the summariser fails (the caller then cuts the page instead: a summary is a nicety).
 */
export async function summarizePage(input: {
  page: ExtractedPage;
  endpoint: Endpoint;
  services: ToolServices;
  signal: AbortSignal;
  maxChars: number;
}): Promise<string | undefined> {
  const { page, services } = input;
  const prompt =
    `Summarise the page below in Markdown, in at most ${Math.round(input.maxChars / 5)} words. Keep facts, numbers, names and code exactly.\n` +
    `Source: ${page.final_url}\nTitle: ${page.title}\n\n${page.content.slice(0, SUMMARIZER_INPUT_CHARS)}`;
  try {
    const response = await services
      .model(input.endpoint)
      .complete({ messages: [{ role: 'user', content: prompt }], signal: input.signal });
    services.reportUsage?.(response.usage);
    const text = response.message.content?.trim();
    if (!text) return undefined;
    return `[summary of ${page.final_url} (${page.content.length} characters) by ${input.endpoint.model}]\n\n${text.slice(0, input.maxChars)}`;
  } catch (error) {
    if (input.signal.aborted) throw error;
    return undefined;
  }
}
