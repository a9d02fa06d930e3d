import pLimit from 'p-limit';
import { z } from 'zod';
import { DEFAULT_WEB_CONFIG, type WebConfig } from '../../config/web.js';
import { defineTool } from '../registry.js';
import type { ToolServices } from '../services.js';
import { FetchFailure, fetchUrl, type FetchedUrl } from './fetch-url.js';
import { htmlToMarkdown, pdfToText, type PageText } from './page-to-markdown.js';
import { summarizePage } from './summarize-page.js';

export const WEB_EXTRACT_MAX_URLS = 10;

export const WebExtractParameters = z.object({
  urls: z
    .array(z.string().min(1))
    .min(1)
    .max(WEB_EXTRACT_MAX_URLS)
    .describe(`Pages to read (http or https), at most ${WEB_EXTRACT_MAX_URLS}.`),
  question: z
    .string()
    .min(1)
    .optional()
    .describe('What you want from the pages; long pages are summarised with it in mind.'),
});

/** A page as cached and shown: the converted text with where it came from. */
export interface ExtractedPage {
  url: string;
  final_url: string;
  title: string;
  content_type: string;
  content: string;
  /** Bytes the page had beyond web.extract.max_bytes (only that much was read). */
  cut_at_bytes?: number;
  /** The page was this long and `content` is the summariser's summary of it. */
  summarized_from_chars?: number;
}

type PageOutcome = ExtractedPage | { url: string; error: string };

export const webExtractTool = defineTool({
  name: 'web_extract',
  toolset: 'web',
  version: '1',
  description:
    'Read web pages: for each URL, its main content as Markdown (navigation, ads and footers removed; PDFs as text). ' +
    'Each URL succeeds or fails on its own; a failed one says why.',
  parameters: WebExtractParameters,
  run: async ({ urls, question }, { services, signal }) => {
    const web = services?.settings.web ?? DEFAULT_WEB_CONFIG;
    const limit = pLimit(4);
    const pages = await Promise.all(urls.map((url) => limit(() => extractOne(url, web, services, signal))));
    return { pages: await Promise.all(pages.map((page) => fitToBudget(page, web, question, services, signal))) };
  },
});

async function extractOne(
  url: string,
  web: WebConfig,
  services: ToolServices | undefined,
  signal: AbortSignal,
): Promise<PageOutcome> {
  const cache = services?.webCache;
  const key = `url:${url}`;
  const cached = cache?.get(key) as PageOutcome | undefined;
  if (cached) {
    cache!.counts.hits++;
    return cached;
  }
  let fetched: FetchedUrl;
  try {
    if (cache) cache.counts.fetches++;
    fetched = await fetchUrl(
      url,
      web,
      { timeoutMs: web.extract.timeout_ms, maxBytes: web.extract.max_bytes, maxRedirects: web.extract.max_redirects },
      signal,
    );
  } catch (error) {
    if (signal.aborted) throw error;
    if (error instanceof FetchFailure) return { url, error: error.message };
    throw error;
  }
  if (fetched.status >= 400) {
    const failed = { url, error: `HTTP ${fetched.status} from ${fetched.finalUrl}` };
    // A 4xx answer is the page's answer (cached, so a replay sees it too); 5xx may be passing.
    if (fetched.status < 500) cache?.put(key, failed);
    return failed;
  }
  let text: PageText;
  try {
    const converted = await convert(fetched, web);
    if (typeof converted === 'string') return { url, error: converted };
    text = converted;
  } catch (error) {
    return {
      url,
      error: `could not read the ${fetched.contentType || 'document'} at ${fetched.finalUrl}: ${(error as Error).message}`,
    };
  }
  const page: ExtractedPage = {
    url,
    final_url: fetched.finalUrl,
    title: text.title,
    content_type: fetched.contentType.split(';')[0]!.trim(),
    content: text.markdown,
    ...(fetched.truncated ? { cut_at_bytes: web.extract.max_bytes } : {}),
  };
  cache?.put(key, page);
  return page;
}

/** The text of a fetched body by its type, or why the type is not read. */
async function convert(fetched: FetchedUrl, web: WebConfig): Promise<PageText | string> {
  const type = fetched.contentType.split(';')[0]!.trim();
  const head = fetched.body.subarray(0, 512).toString('latin1');
  if (type === 'application/pdf' || (type === '' && head.startsWith('%PDF'))) {
    if (fetched.truncated)
      return `the PDF at ${fetched.finalUrl} is larger than web.extract.max_bytes (${web.extract.max_bytes} bytes); it was not read`;
    return pdfToText(fetched.body);
  }
  const text = decode(fetched.body, fetched.contentType);
  if (type === 'text/html' || type === 'application/xhtml+xml' || (type === '' && /<html|<!doctype html/i.test(head)))
    return htmlToMarkdown(text);
  if (
    type.startsWith('text/') ||
    type === 'application/json' ||
    type.endsWith('+json') ||
    type === 'application/xml' ||
    type === ''
  )
    return { title: '', markdown: text };
  return `unsupported content type ${type} at ${fetched.finalUrl} (web_extract reads HTML, PDF and text)`;
}

function decode(body: Buffer, contentType: string): string {
  const charset = /charset=([^;]+)/i.exec(contentType)?.[1]?.trim().replace(/"/g, '') ?? 'utf-8';
  try {
    return new TextDecoder(charset).decode(body);
  } catch {
    return body.toString('utf8');
  }
}

/** Long pages are summarised by the summariser model when one is configured, else cut at web.extract.max_chars. */
async function fitToBudget(
  page: PageOutcome,
  web: WebConfig,
  question: string | undefined,
  services: ToolServices | undefined,
  signal: AbortSignal,
): Promise<PageOutcome> {
  if ('error' in page || page.content.length <= web.extract.max_chars) return page;
  const summarizer = services?.auxiliary.summarizer;
  if (summarizer && services) {
    const summary = await summarizePage({
      page,
      question,
      endpoint: summarizer,
      services,
      signal,
      maxChars: web.extract.max_chars,
    });
    if (summary !== undefined) return { ...page, content: summary, summarized_from_chars: page.content.length };
  }
  const omitted = page.content.length - web.extract.max_chars;
  return {
    ...page,
    content: `${page.content.slice(0, web.extract.max_chars)}\n\n[... ${omitted} more characters of ${page.final_url} not shown]`,
  };
}
