import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { NetworkPolicySchema, type NetworkPolicy } from '../../config/web.js';
import { specialAddress } from './special-addresses.js';

/**
 * Where tools that fetch may go. Every fetch a model can steer (web_extract, vision_analyze of a
 * URL, a browser) asks this module first, and again on every redirect hop, about the address the
 * host name RESOLVES to: a page must not be able to make the harness reach an internal service.
 * The schema (`web.allow_domains`, `web.deny_domains`, `web.allow_private`,
 * `web.allow_private_origins`) lives in config/.
 */
export { NetworkPolicySchema, type NetworkPolicy };

export const DEFAULT_NETWORK_POLICY: NetworkPolicy = { allow_domains: [], deny_domains: [], allow_private: false };

/** True for an address a default policy refuses: special-purpose ranges and this host's own addresses. */
export function isPrivateAddress(address: string): boolean {
  return specialAddress(address) !== undefined;
}

function normalizeDomain(domain: string): string {
  return domain.trim().toLowerCase().replace(/^\*\./, '').replace(/\.$/, '');
}

function matchesDomain(host: string, domain: string): boolean {
  const wanted = normalizeDomain(domain);
  return host === wanted || host.endsWith(`.${wanted}`);
}

/** Why the policy refuses this host name by its domain lists, or undefined. (Addresses are checked separately.) */
export function domainRefusal(hostname: string, policy: NetworkPolicy): string | undefined {
  const host = normalizeDomain(hostname.replace(/^\[|\]$/g, ''));
  const denied = policy.deny_domains.find((domain) => matchesDomain(host, domain));
  if (denied) return `${host} is in web.deny_domains (${denied})`;
  if (policy.allow_domains.length > 0 && !policy.allow_domains.some((domain) => matchesDomain(host, domain))) {
    return `${host} is not in web.allow_domains (${policy.allow_domains.join(', ')})`;
  }
  return undefined;
}

const UNLESS = 'these are refused unless web.allow_private is true';

/** What about this address the policy refuses ("a loopback address (127.0.0.0/8)"), or undefined. */
function refusedKind(address: string, policy: NetworkPolicy): string | undefined {
  return policy.allow_private ? undefined : specialAddress(address);
}

/** Why the policy refuses this resolved address, or undefined. */
export function addressRefusal(address: string, policy: NetworkPolicy): string | undefined {
  const kind = refusedKind(address, policy);
  return kind && `${address} is ${kind}; ${UNLESS}`;
}

/** A refusal of the policy: tools turn it into a result the model reads. */
export class NetworkPolicyError extends Error {
  readonly code = 'network_policy';
  constructor(
    readonly url: string,
    readonly reason: string,
    /** The hop that redirected here, when this URL is a redirect's target. */
    readonly from?: string,
  ) {
    super(`refused by the network policy: ${from ? `redirect from ${from} to ${url}` : url}: ${reason}`);
    this.name = 'NetworkPolicyError';
  }
}

/** Host (no brackets) and port: what a connection, proxied or not, is made to. */
export function endpointKey(hostname: string, port: number): string {
  return `${hostname.replace(/^\[|\]$/g, '').toLowerCase()} ${port}`;
}

/** endpointKey of the connection a URL makes (the scheme's port when it names none). */
export function urlEndpointKey(url: URL): string {
  return endpointKey(url.hostname, Number(url.port) || (/^(https|wss):$/.test(url.protocol) ? 443 : 80));
}

/**
 * The policy one connection is judged by: web.allow_private_origins lifts the address check for
 * the listed host and port only (a local test site), so a redirect anywhere else is still judged.
 * The scheme is not compared: a proxied connection shows only host and port, the same server.
 */
export function policyForHost(hostname: string, port: number, policy: NetworkPolicy): NetworkPolicy {
  return policyForEndpoint(endpointKey(hostname, port), policy);
}

/** policyForHost for the host and port a URL connects to. */
export function policyForUrl(url: URL, policy: NetworkPolicy): NetworkPolicy {
  return policyForEndpoint(urlEndpointKey(url), policy);
}

function policyForEndpoint(wanted: string, policy: NetworkPolicy): NetworkPolicy {
  if (policy.allow_private || !policy.allow_private_origins?.length) return policy;
  const listed = policy.allow_private_origins.some((origin) => urlEndpointKey(new URL(origin)) === wanted);
  return listed ? { ...policy, allow_private: true } : policy;
}

/**
 * Why this URL may not be fetched before any connection: its scheme, its domain, or a literal
 * address. Host names are checked again on the address they resolve to (`policyLookup`).
 */
export function urlRefusal(url: string | URL, policy: NetworkPolicy): string | undefined {
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url) : url;
  } catch {
    return 'not a valid absolute URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return `scheme ${parsed.protocol} is not fetched (only http and https)`;
  if (parsed.username || parsed.password) return 'URLs with credentials are not fetched';
  const refusal = domainRefusal(parsed.hostname, policy);
  if (refusal) return refusal;
  const literal = parsed.hostname.replace(/^\[|\]$/g, '');
  return isIP(literal) ? addressRefusal(literal, policyForUrl(parsed, policy)) : undefined;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for node:http/https/net that resolves the name and refuses private addresses: the
 * address checked is the one connected to, so DNS rebinding between check and connect is moot.
 */
export function policyLookup(
  policy: NetworkPolicy,
): (hostname: string, options: LookupOptions, callback: LookupCallback) => void {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as LookupAddress[];
      const refused = list
        .map((entry) => ({ address: entry.address, kind: refusedKind(entry.address, policy) }))
        .find((entry) => entry.kind !== undefined);
      if (refused || list.length === 0) {
        const reason = refused
          ? `${hostname} resolves to ${refused.address}, ${refused.kind}; ${UNLESS}`
          : `${hostname} has no address`;
        const failure = new NetworkPolicyError(hostname, reason) as NetworkPolicyError & NodeJS.ErrnoException;
        return callback(failure, '', 0);
      }
      if (options.all) return callback(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

/**
 * Check a URL completely before handing it to an engine that fetches on its own (a browser):
 * scheme, domain lists, and every address the host resolves to.
 */
export async function checkUrl(url: string, policy: NetworkPolicy): Promise<string | undefined> {
  const early = urlRefusal(url, policy);
  if (early) return early;
  const parsed = new URL(url);
  if (isIP(parsed.hostname.replace(/^\[|\]$/g, ''))) return undefined;
  return new Promise((resolve) => {
    policyLookup(policyForUrl(parsed, policy))(parsed.hostname, { all: true }, (error) =>
      resolve(error ? (error instanceof NetworkPolicyError ? error.reason : error.message) : undefined),
    );
  });
}
