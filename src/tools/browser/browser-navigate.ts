import { z } from 'zod';
import { defineTool, ToolFailure } from '../registry.js';
import {
  browserAvailable,
  browserSession,
  firstLine,
  isTimeout,
  POLICY_HINT,
  type NavigationFailure,
} from './session.js';

export const BrowserNavigateParameters = z.object({
  url: z
    .string()
    .min(1)
    .describe('The address to open, e.g. "https://example.com/page" (https:// is assumed when no scheme is given).'),
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
  version: '1',
  description:
    'Open a URL in the browser. Returns the page as an accessibility snapshot: one element per line, such as ' +
    '`[ref=e12] button "Submit"`; the other browser tools act on these refs.',
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
