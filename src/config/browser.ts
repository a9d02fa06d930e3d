import { z } from 'zod';

/** The `browser:` section of a config: which Chromium drives the browser toolset, and its time limits. */
export const BrowserConfigSchema = z.strictObject({
  executable: z
    .string()
    .min(1)
    .optional()
    .describe(
      'the Chromium (or Chrome) binary to launch; default: the first of chromium, chromium-browser, google-chrome found on PATH',
    ),
  cdp_url: z
    .string()
    .min(1)
    .optional()
    .describe(
      'connect to a running browser over the Chrome DevTools Protocol (http:// or ws://) instead of launching one',
    ),
  navigation_timeout_ms: z
    .number()
    .int()
    .positive()
    .default(15_000)
    .describe('how long a navigation waits for the page to load; after it the page is shown as it stands, with a note'),
  action_timeout_ms: z
    .number()
    .int()
    .positive()
    .default(5_000)
    .describe('how long a click, type or key press waits for its element'),
  launch_timeout_ms: z
    .number()
    .int()
    .positive()
    .default(30_000)
    .describe('how long starting (or connecting to) the browser may take'),
  snapshot_max_chars: z
    .number()
    .int()
    .positive()
    .default(20_000)
    .describe(
      'snapshot text shown per result; a longer page is cut with a note (the tool-result budget applies after)',
    ),
});
export type BrowserConfig = z.infer<typeof BrowserConfigSchema>;
export type BrowserConfigInput = z.input<typeof BrowserConfigSchema>;

export const DEFAULT_BROWSER_CONFIG: BrowserConfig = BrowserConfigSchema.parse({});
