import type { Endpoint } from '../config/endpoint.js';
import { ConfigError } from '../errors.js';

/** The key from the named variable; local servers need none, so a placeholder stands in. */
export function apiKeyFor(endpoint: Endpoint, env: NodeJS.ProcessEnv): string {
  const key = env[endpoint.api_key_env];
  if (key) return key;
  if (isLocalEndpoint(endpoint.base_url)) return 'none';
  throw new ConfigError(
    `the endpoint ${endpoint.base_url} needs an API key but $${endpoint.api_key_env} is not set; set it, or pass --api-key-env VAR naming the variable that holds the key`,
    { code: 'api_key_missing' },
  );
}

/** Loopback, private networks and bare host names (a compose service such as `vllm`). */
export function isLocalEndpoint(baseURL: string): boolean {
  const host = new URL(baseURL).hostname.replace(/^\[|\]$/g, '');
  if (
    host === 'localhost' ||
    host === '::1' ||
    host === '0.0.0.0' ||
    (!host.includes('.') && !host.includes(':')) ||
    /\.(local|localhost|internal)$/.test(host)
  )
    return true;
  return /^(127\.|10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.)/.test(host);
}
