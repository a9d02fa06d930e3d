import { z } from 'zod';

/** The network policy of every tool that fetches (src/tools/network/network-policy.ts applies it). */
export const NetworkPolicySchema = z.strictObject({
  allow_domains: z
    .array(z.string().min(1))
    .default([])
    .describe(
      'when non-empty, only these domains (and their subdomains) may be fetched; "*.example.com" and "example.com" mean the same',
    ),
  deny_domains: z
    .array(z.string().min(1))
    .default([])
    .describe('never fetched, with their subdomains; wins over allow_domains'),
  allow_private: z
    .boolean()
    .default(false)
    .describe(
      "allow loopback, private, link-local and the other special-purpose addresses, and this host's own (local test servers); refused by default",
    ),
  allow_private_origins: z
    .array(z.string().refine(isOrigin, 'must be an origin such as http://127.0.0.1:8080 (scheme, host, port only)'))
    .optional()
    .describe(
      'origins (http://host:port) fetched even at a private address, while every other private address stays refused: a local test site without web.allow_private',
    ),
});
export type NetworkPolicy = z.infer<typeof NetworkPolicySchema>;

function isOrigin(text: string): boolean {
  try {
    const url = new URL(text);
    const bare = !url.username && !url.password && url.pathname === '/' && !url.search && !url.hash;
    return bare && /^https?:$/.test(url.protocol);
  } catch {
    return false;
  }
}

export const SEARCH_BACKENDS = ['searxng', 'brave', 'tavily', 'firecrawl'] as const;
export type SearchBackendName = (typeof SEARCH_BACKENDS)[number];

export const WebSearchConfigSchema = z.strictObject({
  backend: z
    .enum(SEARCH_BACKENDS)
    .optional()
    .describe('default: the first configured of searxng, brave, tavily, firecrawl'),
  base_url: z.url().optional().describe("the backend's base URL (default: its public API; searxng: TRAJ_SEARXNG_URL)"),
  limit: z.number().int().min(1).max(20).default(5).describe('results when the model does not say'),
  timeout_ms: z.number().int().positive().default(20_000),
});

export const WebExtractConfigSchema = z.strictObject({
  timeout_ms: z.number().int().positive().default(20_000).describe('per URL, redirects included'),
  max_bytes: z
    .number()
    .int()
    .positive()
    .default(5_000_000)
    .describe('body bytes read per URL; the rest is not downloaded'),
  max_redirects: z.number().int().min(0).max(20).default(5),
  max_chars: z
    .number()
    .int()
    .positive()
    .default(20_000)
    .describe('Markdown characters per page before it is cut (or summarised)'),
});

export const WebConfigSchema = z.strictObject({
  ...NetworkPolicySchema.shape,
  search: WebSearchConfigSchema.default(WebSearchConfigSchema.parse({})),
  extract: WebExtractConfigSchema.default(WebExtractConfigSchema.parse({})),
});
export type WebConfig = z.infer<typeof WebConfigSchema>;
export type WebConfigInput = z.input<typeof WebConfigSchema>;

export const DEFAULT_WEB_CONFIG: WebConfig = WebConfigSchema.parse({});
