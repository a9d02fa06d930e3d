import { createHash } from 'node:crypto';
import pLimit from 'p-limit';
import { z } from 'zod';
import { DEFAULT_WEB_CONFIG, type WebConfig } from '../../config/web.js';
import { defineTool, type ToolContext } from '../tool.js';
import { ToolFailure } from '../tool-failure.js';
import type { ToolServices } from '../services.js';
import { FetchFailure, fetchUrl, type FetchedUrl } from './fetch-url.js';
import { htmlToMarkdown, pdfToText, type PageText } from './page-to-markdown.js';
import type { ExtractedPage } from './extracted-page.js';
import { summarizePage } from './summarize-page.js';

export const WEB_EXTRACT_MAX_URLS = 5;
const CHAR_LIMIT_MIN = 2_000;

export const WebExtractParameters = z.object({
  urls: z
    .array(z.string())
    .max(WEB_EXTRACT_MAX_URLS)
    .describe('List of URLs to extract content from (max 5 URLs per call)'),
  char_limit: z
    .number()
    .int()
    .min(CHAR_LIMIT_MIN)
    .optional()
    .describe(
      'Optional per-page character budget sent back (default 15000). Pages larger than this are head+tail truncated with the full text stored to disk. Raise it when you need more of a long page inline.',
    ),
});

type PageOutcome = ExtractedPage | { url: string; error: string };

export const webExtractTool = defineTool({
  name: 'web_extract',
  toolset: 'web',
  version: '2',
  // Hermes' words, as hermes-agent sends them (tests/fixtures/hermes/tool-schemas.json).
  description:
    "Extract content from web page URLs. Returns clean page content in markdown/text (no LLM summarization — fast). Also works with PDF URLs (arxiv papers, documents) — pass the PDF link directly. Pages within the char budget (default 15000) return whole; larger pages return a head+tail window with a footer telling you the full text's saved file path and the read_file call to page through the omitted middle. Inline images appear as [IMAGE: alt] placeholders; real image URLs are kept as links. If a URL fails or times out, use the browser tool instead.",
  parameters: WebExtractParameters,
  run: async ({ urls, char_limit: charLimit }, context) => {
    const { services, signal } = context;
    if (urls.length === 0) throw new ToolFailure('urls is empty', 'pass one to five http(s) URLs');
    const web = services?.settings.web ?? DEFAULT_WEB_CONFIG;
    const budget = charLimit ?? web.extract.max_chars;
    const limit = pLimit(4);
    const pages = await Promise.all(urls.map((url) => limit(() => extractOne(url, web, services, signal))));
    return { pages: await Promise.all(pages.map((page) => fitToBudget(page, budget, context))) };
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

/** Where the full text of a long page is saved in the sandbox, for read_file to page through. */
function savedPath(url: string): string {
  return `.traj/web/${createHash('sha256').update(url).digest('hex').slice(0, 16)}.md`;
}

/**
 * A page over the budget: summarised by the summariser model when the run configures one (an
 * opt-in departure from Hermes), else a head+tail window with the full text saved in the sandbox.
 */
async function fitToBudget(page: PageOutcome, budget: number, context: ToolContext): Promise<PageOutcome> {
  if ('error' in page || page.content.length <= budget) return page;
  const { services, signal, sandbox } = context;
  const summarizer = services?.auxiliary.summarizer;
  if (summarizer && services) {
    const summary = await summarizePage({ page, endpoint: summarizer, services, signal, maxChars: budget });
    if (summary !== undefined) return { ...page, content: summary, summarized_from_chars: page.content.length };
  }
  const path = savedPath(page.final_url);
  const saved = await sandbox.writeFile(path, page.content).then(
    () => true,
    () => false,
  );
  const head = Math.floor(budget * 0.6);
  const tail = budget - head;
  const omitted = page.content.length - head - tail;
  const skippedLines = page.content.slice(0, head).split('\n').length;
  const footer = saved
    ? `[... ${omitted} characters omitted; the full text is saved at ${path}: read_file(path='${path}', offset=${skippedLines}) pages through the middle]`
    : `[... ${omitted} characters of ${page.final_url} omitted]`;
  return {
    ...page,
    content: `${page.content.slice(0, head)}\n\n${footer}\n\n${page.content.slice(page.content.length - tail)}`,
  };
}
