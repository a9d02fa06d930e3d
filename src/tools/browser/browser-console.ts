import { z } from 'zod';
import { errorMessage } from '../../errors.js';
import { defineTool } from '../tool.js';
import { ToolFailure } from '../tool-failure.js';
import { browserAvailable, browserSession } from './session.js';

/** A returned value longer than this is cut: the model asked for a value, not a page dump. */
const RESULT_MAX_CHARS = 20_000;

export const BrowserConsoleParameters = z.object({
  clear: z.boolean().default(false).describe('If true, clear the message buffers after reading'),
  expression: z
    .string()
    .optional()
    .describe(
      "JavaScript expression to evaluate in the page context. Runs in the browser like DevTools console — full access to DOM, window, document. Return values are serialized to JSON. Example: 'document.title' or 'document.querySelectorAll(\"a\").length'",
    ),
});

/** Runs in the page: the expression's value (awaited), serialised the way DevTools would show it. */
function evaluationScript(expression: string): string {
  return `(async () => {
    const value = await (0, eval)(${JSON.stringify(expression)});
    if (value === undefined) return { type: 'undefined' };
    try { return { type: typeof value, json: JSON.stringify(value) }; }
    catch { return { type: typeof value, json: JSON.stringify(String(value)) }; }
  })()`;
}

export const browserConsoleTool = defineTool({
  name: 'browser_console',
  toolset: 'browser',
  version: '1',
  // Hermes' words, as hermes-agent sends them (tests/fixtures/hermes/tool-schemas.json).
  description:
    "Get browser console output and JavaScript errors from the current page. Returns console.log/warn/error/info messages and uncaught JS exceptions. Use this to detect silent JavaScript errors, failed API calls, and application warnings. Requires browser_navigate to be called first. When 'expression' is provided, evaluates JavaScript in the page context and returns the result — use this for DOM inspection, reading page state, or extracting data programmatically.",
  parameters: BrowserConsoleParameters,
  available: browserAvailable,
  run: ({ clear, expression }, context) => {
    const session = browserSession(context);
    return session.exclusive(async () => {
      const page = await session.currentPage();
      if (expression === undefined) return { url: page.url(), ...session.consoleMessages(clear) };
      let evaluated: { type: string; json?: string };
      try {
        evaluated = (await page.evaluate(evaluationScript(expression))) as { type: string; json?: string };
      } catch (error) {
        throw new ToolFailure(
          `the expression threw: ${errorMessage(error).split('\n')[0]}`,
          'fix the JavaScript and call again',
        );
      }
      const json = evaluated.json ?? 'undefined';
      const result =
        json.length > RESULT_MAX_CHARS
          ? `${json.slice(0, RESULT_MAX_CHARS)} [... ${json.length - RESULT_MAX_CHARS} more characters]`
          : json;
      return { url: page.url(), result, result_type: evaluated.type, ...session.consoleMessages(clear) };
    });
  },
});
