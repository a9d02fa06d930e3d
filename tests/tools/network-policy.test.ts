import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { NetworkPolicySchema } from '../../src/config/web.js';
import {
  checkUrl,
  domainRefusal,
  fetchUrl,
  FetchFailure,
  isPrivateAddress,
  urlRefusal,
} from '../../src/tools/web/index.js';
import { startWebStandIn } from '../helpers/web-stand-in.js';

const policy = (input: Record<string, unknown> = {}) => NetworkPolicySchema.parse(input);
const limits = { timeoutMs: 5_000, maxBytes: 1_000_000, maxRedirects: 5 };

describe('network policy', () => {
  test('loopback, private, link-local, CGNAT and mapped addresses are private; public ones are not', () => {
    for (const address of [
      '127.0.0.1',
      '127.8.9.10',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fd12:3456::1',
      '::ffff:127.0.0.1',
      '[::1]',
      '224.0.0.1',
    ]) {
      assert.equal(isPrivateAddress(address), true, address);
    }
    for (const address of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
      assert.equal(isPrivateAddress(address), false, address);
  });

  test('domain lists: deny wins, allow limits to the listed domains and their subdomains', () => {
    const lists = policy({ allow_domains: ['example.com', '*.docs.org'], deny_domains: ['secret.example.com'] });
    assert.equal(domainRefusal('example.com', lists), undefined);
    assert.equal(domainRefusal('www.example.com', lists), undefined);
    assert.equal(domainRefusal('api.docs.org', lists), undefined);
    assert.match(domainRefusal('secret.example.com', lists)!, /deny_domains/);
    assert.match(domainRefusal('a.secret.example.com', lists)!, /deny_domains/);
    assert.match(domainRefusal('notexample.com', lists)!, /not in web\.allow_domains/);
    assert.match(domainRefusal('example.com.evil.net', lists)!, /not in web\.allow_domains/);
  });

  test('schemes, credentials and literal private addresses are refused before any connection', () => {
    assert.match(urlRefusal('file:///etc/passwd', policy())!, /scheme file:/);
    assert.match(urlRefusal('http://user:pw@example.com/', policy())!, /credentials/);
    assert.match(urlRefusal('http://169.254.169.254/latest/meta-data/', policy())!, /private or link-local/);
    assert.match(urlRefusal('http://[::ffff:127.0.0.1]:80/', policy())!, /private/);
    assert.match(
      urlRefusal('http://2130706433/', policy())!,
      /private/,
      'decimal IPv4 is normalised by URL and still refused',
    );
    assert.equal(urlRefusal('http://127.0.0.1/', policy({ allow_private: true })), undefined);
  });

  test('a host name is judged by the address it resolves to (localhost → 127.0.0.1)', async () => {
    assert.match((await checkUrl('http://localhost:9/', policy()))!, /localhost resolves to 127\.0\.0\.1/);
    assert.equal(await checkUrl('http://localhost:9/', policy({ allow_private: true })), undefined);
  });

  test('a fetch of a private-address URL is refused by default and never reaches the server', async (t) => {
    const site = await startWebStandIn();
    t.after(() => site.close());
    for (const url of [`${site.url}/article`, `${site.url.replace('127.0.0.1', 'localhost')}/article`]) {
      await assert.rejects(
        fetchUrl(url, policy(), limits),
        (error: unknown) =>
          error instanceof FetchFailure &&
          error.kind === 'policy' &&
          /refused by the network policy/.test(error.message),
        url,
      );
    }
    assert.equal(site.hits.get('/article'), undefined, 'no request reached the server');
    const allowed = await fetchUrl(`${site.url}/article`, policy({ allow_private: true }), limits);
    assert.equal(allowed.status, 200);
  });

  test('every redirect hop is checked: a redirect to a denied host is refused', async (t) => {
    const site = await startWebStandIn();
    t.after(() => site.close());
    await assert.rejects(
      fetchUrl(`${site.url}/to-localhost`, policy({ allow_private: true, deny_domains: ['localhost'] }), limits),
      /localhost is in web\.deny_domains/,
    );
    assert.equal(site.hits.get('/article'), undefined);
    const followed = await fetchUrl(`${site.url}/r3`, policy({ allow_private: true }), limits);
    assert.equal(followed.finalUrl, `${site.url}/article`);
    assert.equal(followed.redirects.length, 3);
  });
});
