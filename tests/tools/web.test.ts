import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_WEB_CONFIG, WebConfigSchema, type WebConfig } from '../../src/config/web.js';
import { createModelClient } from '../../src/model/client.js';
import { createLocalSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { reply, startScriptedServer, type ChatRequest } from '../../src/testing/index.js';
import { countingWebCache, loadToolRegistry, type ToolServices } from '../../src/tools/index.js';
import { ARTICLE_HTML, PDF_LINES, startWebStandIn, type WebStandIn } from '../helpers/web-stand-in.js';
import { callTool, errorOf, jsonOf, toolContext } from './tool-context.js';
import { DEFAULT_TOOL_SETTINGS } from '../../src/config/tool-settings.js';

interface Page {
  url: string;
  final_url?: string;
  title?: string;
  content?: string;
  error?: string;
  cut_at_bytes?: number;
}

let site: WebStandIn;
let sandbox: Sandbox;
before(async () => {
  site = await startWebStandIn();
  sandbox = await createLocalSandbox();
});
after(async () => {
  await site.close();
  await sandbox.dispose();
});

function services(web: Partial<WebConfig> = {}, extra: Partial<ToolServices> = {}): ToolServices {
  return {
    settings: { ...DEFAULT_TOOL_SETTINGS, web: WebConfigSchema.parse({ allow_private: true, ...web }) },
    auxiliary: {},
    model: (endpoint) => createModelClient(endpoint),
    webCache: countingWebCache(),
    ...extra,
  };
}

async function extract(urls: string[], toolServices = services(), charLimit?: number): Promise<Page[]> {
  const outcome = await callTool(
    'web_extract',
    { urls, ...(charLimit ? { char_limit: charLimit } : {}) },
    toolContext(sandbox, { services: toolServices }),
  );
  return jsonOf<{ pages: Page[] }>(outcome).pages;
}

describe('web_extract against real HTTP servers', () => {
  test('an article page becomes Markdown holding the article, not the navigation, ads or footer', async () => {
    const [page] = await extract([`${site.url}/article`]);
    assert.equal(page!.title, 'Tidal Power in the Bay of Fundy');
    const content = page!.content!;
    assert.match(content, /highest tides in the world/);
    assert.match(content, /## What comes next/);
    assert.match(content, /twenty more turbines by 2030/);
    for (const boilerplate of [
      'Subscribe now',
      'Gnome Depot',
      'celebrity sandwiches',
      'All rights reserved',
      'Cookie settings',
    ]) {
      assert.doesNotMatch(content, new RegExp(boilerplate), boilerplate);
    }
    assert.ok(ARTICLE_HTML.includes('Subscribe now'), 'the page did hold the navigation');
  });

  test('a PDF is read as text; plain text passes through; an unsupported type is a per-URL error', async () => {
    const pages = await extract([`${site.url}/report.pdf`, `${site.url}/notes.txt`, `${site.url}/archive.zip`]);
    for (const line of PDF_LINES) assert.ok(pages[0]!.content!.includes(line), line);
    assert.equal(pages[1]!.content, 'plain notes: bring a tide table');
    assert.match(pages[2]!.error!, /unsupported content type application\/zip/);
  });

  test('a redirect chain is followed to the article; a redirect loop stops at the limit', async () => {
    const [chained, looped] = await extract([`${site.url}/r3`, `${site.url}/loop`]);
    assert.equal(chained!.final_url, `${site.url}/article`);
    assert.match(chained!.content!, /Bay of Fundy/);
    assert.match(looped!.error!, /more than 5 redirects/);
  });

  test('a 404 and a page that never answers fail on their own; the other URL still succeeds', async () => {
    const toolServices = services({ extract: { ...DEFAULT_WEB_CONFIG.extract, timeout_ms: 500 } });
    const [missing, hanging, fine] = await extract(
      [`${site.url}/nothing-here`, `${site.url}/hang`, `${site.url}/article`],
      toolServices,
    );
    assert.match(missing!.error!, /HTTP 404/);
    assert.match(hanging!.error!, /no complete answer within 0\.5 s/);
    assert.match(fine!.content!, /Bay of Fundy/);
  });

  test('a 20 MB page is read only up to max_bytes; over max_chars the head and tail show and the whole is saved', async () => {
    const before = site.hits.get('/huge') ?? 0;
    const toolServices = services({
      extract: { ...DEFAULT_WEB_CONFIG.extract, max_bytes: 1_000_000, max_chars: 5_000 },
    });
    const [page] = await extract([`${site.url}/huge`], toolServices);
    assert.equal(page!.cut_at_bytes, 1_000_000);
    const footer =
      /\n\n\[\.\.\. (\d+) characters omitted; the full text is saved at (\.traj\/web\/[0-9a-f]{16}\.md): read_file\(path='\2', offset=\d+\) pages through the middle\]\n\n/.exec(
        page!.content!,
      );
    assert.ok(footer, page!.content!.slice(2_900, 3_300));
    const saved = (await sandbox.readFile(footer[2]!)).toString();
    const [head, tail] = page!.content!.split(footer[0]);
    assert.deepEqual([head!.length, tail!.length], [3_000, 2_000], 'Hermes-style 60/40 window of max_chars');
    assert.equal(saved.length, 3_000 + Number(footer[1]) + 2_000);
    assert.ok(saved.startsWith(head!) && saved.endsWith(tail!));
    assert.equal(site.hits.get('/huge'), before + 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const written = site.hugeBytesWritten.at(-1)!;
    assert.ok(written < 8_000_000, `the rest of the page was never downloaded (server wrote ${written} bytes)`);
  });

  test('a private-address URL is refused by default, as a result the model reads', async () => {
    const [page] = await extract([`${site.url}/article`], services({ allow_private: false }));
    assert.match(page!.error!, /refused by the network policy: .*127\.0\.0\.1.*web\.allow_private/);
  });

  test('a long page goes to the summariser when one is configured, keeping its source URL', async (t) => {
    const model = await startScriptedServer(() =>
      reply('Tides of 16 m; 2,500 homes powered; 20 more turbines by 2030.'),
    );
    t.after(() => model.close());
    const summarizer = {
      base_url: model.url,
      model: 'summarizer-x',
      api_key_env: 'NO_KEY',
      temperature: undefined,
      timeout_ms: 10_000,
      max_retries: 0,
      concurrency: 4,
      tool_call_format: 'native' as const,
    };
    const used: number[] = [];
    const toolServices = services(
      { extract: { ...DEFAULT_WEB_CONFIG.extract, max_chars: 200 } },
      { auxiliary: { summarizer }, reportUsage: (usage) => used.push(usage.prompt_tokens) },
    );
    const [page] = await extract([`${site.url}/article`], toolServices);
    assert.match(
      page!.content!,
      new RegExp(`^\\[summary of ${site.url}/article \\(\\d+ characters\\) by summarizer-x\\]`),
    );
    assert.match(page!.content!, /2,500 homes/);
    const prompt = String((model.requests[0] as ChatRequest).messages[0]!.content);
    assert.match(prompt, new RegExp(`^Source: ${site.url}/article$`, 'm'));
    assert.match(prompt, /twenty more turbines/);
    assert.equal(used.length, 1, 'the summary call is counted in the usage');
  });

  test('char_limit widens the window for one call; under 2000 it is a schema error naming the field', async () => {
    const toolServices = services({ extract: { ...DEFAULT_WEB_CONFIG.extract, max_chars: 2_000 } });
    const [narrow] = await extract([`${site.url}/huge`], toolServices);
    const [wide] = await extract([`${site.url}/huge`], toolServices, 8_000);
    const window = (page: Page) => page.content!.replace(/\n\n\[\.\.\. [^\]]*\]\n\n/, '').length;
    assert.deepEqual([window(narrow!), window(wide!)], [2_000, 8_000]);
    const refused = await callTool(
      'web_extract',
      { urls: [`${site.url}/huge`], char_limit: 1_999 },
      toolContext(sandbox, { services: toolServices }),
    );
    assert.match(errorOf(refused).error, /char_limit: /);
  });

  test('the cache serves a second read without a fetch', async () => {
    const toolServices = services();
    const before = site.hits.get('/notes.txt') ?? 0;
    await extract([`${site.url}/notes.txt`], toolServices);
    await extract([`${site.url}/notes.txt`], toolServices);
    assert.equal(site.hits.get('/notes.txt'), before + 1);
    assert.deepEqual(toolServices.webCache!.counts, { fetches: 1, hits: 1 });
  });
});

describe('web_search backends (stand-ins answering in each documented format)', () => {
  const cases = [
    { backend: 'searxng', env: (url: string) => ({ TRAJ_SEARXNG_URL: `${url}/searxng` }) },
    {
      backend: 'brave',
      env: (url: string) => ({ BRAVE_API_KEY: 'brave-test-key', TRAJ_BRAVE_URL: `${url}/brave/res/v1` }),
    },
    {
      backend: 'tavily',
      env: (url: string) => ({ TAVILY_API_KEY: 'tvly-test-key', TRAJ_TAVILY_URL: `${url}/tavily` }),
    },
    {
      backend: 'firecrawl',
      env: (url: string) => ({ FIRECRAWL_API_KEY: 'fc-test-key', TRAJ_FIRECRAWL_URL: `${url}/firecrawl` }),
    },
  ];
  for (const { backend, env } of cases) {
    test(`${backend}: ranked results with title, url and snippet`, async () => {
      const outcome = await callTool(
        'web_search',
        { query: 'fundy tidal power', limit: 2 },
        toolContext(sandbox, { env: env(site.url), services: services() }),
      );
      const body = jsonOf<{ backend: string; results: { title: string; url: string; snippet: string }[] }>(outcome);
      assert.equal(body.backend, backend);
      assert.deepEqual(body.results[0], {
        title: 'Tidal Power in the Bay of Fundy',
        url: `${site.url}/article`,
        snippet: 'The Bay of Fundy has the highest tides in the world.',
      });
      assert.equal(body.results.length, 2);
      const seen = site.searches.filter((search) => search.backend === backend).at(-1)!;
      assert.equal(seen.query, 'fundy tidal power');
    });
  }

  test('a wrong key is a readable failure naming the HTTP status', async () => {
    const outcome = await callTool(
      'web_search',
      { query: 'x' },
      toolContext(sandbox, {
        env: { BRAVE_API_KEY: 'wrong', TRAJ_BRAVE_URL: `${site.url}/brave/res/v1` },
        services: services(),
      }),
    );
    assert.match(errorOf(outcome).error, /web search failed: search backend answered HTTP 401/);
  });

  test('with no backend configured the web toolset is unavailable, naming what to set', async () => {
    const registry = await loadToolRegistry();
    assert.match(
      registry.unavailableReason('web', { env: {}, services: services() })!,
      /web_search: no search backend configured: set TRAJ_SEARXNG_URL, BRAVE_API_KEY, TAVILY_API_KEY or FIRECRAWL_API_KEY/,
    );
    assert.match(
      registry.unavailableReason('web', {
        env: {},
        services: services({ search: { ...DEFAULT_WEB_CONFIG.search, backend: 'tavily' } }),
      })!,
      /web\.search\.backend is tavily but TAVILY_API_KEY is not set/,
    );
    assert.equal(
      registry.unavailableReason('web', { env: { TRAJ_SEARXNG_URL: 'http://127.0.0.1:1' }, services: services() }),
      undefined,
    );
  });

  test('the configured backend wins over the order; web.search.base_url points it elsewhere', async () => {
    const web = {
      search: { ...DEFAULT_WEB_CONFIG.search, backend: 'firecrawl' as const, base_url: `${site.url}/firecrawl` },
    };
    const outcome = await callTool(
      'web_search',
      { query: 'q' },
      toolContext(sandbox, {
        env: { TRAJ_SEARXNG_URL: 'http://127.0.0.1:1', FIRECRAWL_API_KEY: 'fc-test-key' },
        services: services(web),
      }),
    );
    assert.equal(jsonOf<{ backend: string }>(outcome).backend, 'firecrawl');
  });
});
