/** A fetched document as text the model reads: its main content as Markdown, or a PDF's text. */
export interface PageText {
  title: string;
  markdown: string;
}

/** Elements that are never content, removed before the fallback conversion. */
const BOILERPLATE =
  'script, style, noscript, nav, header, footer, aside, form, iframe, svg, template, [role="navigation"], [role="banner"], [role="contentinfo"], [aria-hidden="true"]';

/**
 * HTML → the article as Markdown: Readability picks the main content (navigation, ads, footers
 * gone), Turndown converts it. Pages Readability cannot read fall back to the body without its
 * boilerplate elements. The libraries load on first use so `traj --help` stays instant.
 */
export async function htmlToMarkdown(html: string): Promise<PageText> {
  const [{ parseHTML }, { Readability }, turndown] = await Promise.all([
    import('linkedom'),
    import('@mozilla/readability'),
    createTurndown(),
  ]);
  const { document } = parseHTML(html);
  const title = document.querySelector('title')?.textContent?.trim() ?? '';
  // Readability mutates the document it reads: give it a copy, keep the original for the fallback.
  // linkedom's document stands in for the DOM type Readability declares (tsconfig has no DOM lib).
  const article = new Readability(parseHTML(html).document as unknown as ConstructorParameters<typeof Readability>[0], {
    keepClasses: false,
  }).parse();
  if (article?.content && (article.textContent ?? '').trim().length > 0) {
    return { title: article.title?.trim() || title, markdown: tidy(turndown.turndown(article.content)) };
  }
  for (const element of document.querySelectorAll(BOILERPLATE)) element.remove();
  const body = document.querySelector('body')?.innerHTML ?? html;
  return { title, markdown: tidy(turndown.turndown(body)) };
}

async function createTurndown() {
  const { default: TurndownService } = await import('turndown');
  const service = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
  service.remove(['script', 'style', 'noscript']);
  return service;
}

/** A PDF's text, pages in order. */
export async function pdfToText(data: Buffer): Promise<PageText> {
  const { extractText, getDocumentProxy, getMeta } = await import('unpdf');
  const pdf = await getDocumentProxy(new Uint8Array(data));
  const { text } = await extractText(pdf, { mergePages: true });
  let title = '';
  try {
    const meta = await getMeta(pdf);
    title = String((meta.info as Record<string, unknown> | undefined)?.Title ?? '');
  } catch {
    // Metadata is optional; the text is what matters.
  }
  return { title, markdown: tidy(text) };
}

function tidy(text: string): string {
  return text
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
