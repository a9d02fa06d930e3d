import { z } from 'zod';
import { defineTool } from '../tool.js';
import { ToolFailure } from '../tool-failure.js';
import {
  browserAvailable,
  browserSession,
  firstLine,
  isTimeout,
  POLICY_HINT,
  type NavigationFailure,
} from './session.js';

export const BrowserNavigateParameters = z.object({
  url: z.string().describe("The URL to navigate to (e.g., 'https://example.com')"),
});

const CHECK_ADDRESS = 'check the address; browser_snapshot shows the page as it is';

/** What the model reads when the page did not open: the policy's or the proxy's reason when one is known. */
function navigationFailure(error: unknown, target: string, known: NavigationFailure | undefined): ToolFailure {
  if (known) return new ToolFailure(known.message, known.refused ? POLICY_HINT : CHECK_ADDRESS);
  if (/ERR_BLOCKED_BY_CLIENT/.test(String(error)))
    return new ToolFailure(
      `refused by the network policy: ${target} or a redirect from it goes to a refused address`,
      POLICY_HINT,
    );
  return new ToolFailure(`could not open ${target}: ${firstLine(error)}`, CHECK_ADDRESS);
}

export const browserNavigateTool = defineTool({
  name: 'browser_navigate',
  toolset: 'browser',
  version: '2',
  // Hermes' words, as hermes-agent sends them (tests/fixtures/hermes/tool-schemas.json).
  description:
    'Navigate to a URL in the browser. Initializes the session and loads the page. Must be called before other browser tools. For simple information retrieval, prefer web_search or web_extract (faster, cheaper). For plain-text endpoints — URLs ending in .md, .txt, .json, .yaml, .yml, .csv, .xml, raw.githubusercontent.com, or any documented API endpoint — prefer curl via the terminal tool or web_extract; the browser stack is overkill and much slower for these. Use browser tools when you need to interact with a page (click, fill forms, dynamic content). Returns a compact page snapshot with interactive elements and ref IDs — no need to call browser_snapshot separately after navigating.',
  parameters: BrowserNavigateParameters,
  available: browserAvailable,
  run: ({ url }, context) => {
    const session = browserSession(context);
    return session.exclusive(async () => {
      const target = /^[a-z][a-z\d+.-]*:/i.test(url) ? url : `https://${url}`;
      const refusal = await session.refusal(target);
      if (refusal) throw new ToolFailure(`refused by the network policy: ${target}: ${refusal}`, POLICY_HINT);
      const page = await session.currentPage();
      // A failure from before this call (a script's navigation) is news, not this navigation's error.
      const earlier = session.takeNavigationFailure();
      if (earlier) session.note(earlier.message);
      try {
        const response = await page.goto(target, { waitUntil: 'load' });
        if (response && response.status() >= 400) session.note(`HTTP ${response.status()} from ${response.url()}`);
      } catch (error) {
        if (!isTimeout(error)) throw navigationFailure(error, target, session.takeNavigationFailure());
        session.note(
          `the page did not finish loading within ${session.config.navigation_timeout_ms} ms; this is what it shows so far`,
        );
      }
      return session.report();
    });
  },
});
