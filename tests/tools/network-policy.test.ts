import assert from 'node:assert/strict';
import os from 'node:os';
import { describe, test } from 'node:test';
import { NetworkPolicySchema } from '../../src/config/web.js';
import { specialAddress } from '../../src/tools/network/special-addresses.js';
import {
  addressRefusal,
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
  test('every IANA special-purpose range is refused, named by its kind; the address just outside is not', () => {
    // [inside, what the refusal calls it, just outside (or undefined when the neighbour is special too)]
    const ranges: Array<[string, RegExp, string | undefined]> = [
      ['0.0.0.1', /"this network" address \(0\.0\.0\.0\/8\)/, '1.0.0.0'],
      ['10.255.255.255', /a private address \(10\.0\.0\.0\/8\)/, '11.0.0.0'],
      ['100.64.0.0', /carrier-grade NAT\) address \(100\.64\.0\.0\/10\)/, '100.63.255.255'],
      ['100.127.255.255', /100\.64\.0\.0\/10/, '100.128.0.0'],
      ['127.8.9.10', /a loopback address \(127\.0\.0\.0\/8\)/, '128.0.0.0'],
      ['169.254.169.254', /a link-local address \(169\.254\.0\.0\/16\)/, '169.255.0.0'],
      ['172.31.255.255', /a private address \(172\.16\.0\.0\/12\)/, '172.32.0.0'],
      ['192.0.0.170', /IETF protocol assignment \(192\.0\.0\.0\/24\)/, '192.0.1.0'],
      ['192.0.2.1', /documentation address \(TEST-NET-1\) \(192\.0\.2\.0\/24\)/, '192.0.3.0'],
      ['192.88.99.1', /6to4 relay anycast address \(192\.88\.99\.0\/24\)/, '192.88.100.0'],
      ['192.168.1.1', /a private address \(192\.168\.0\.0\/16\)/, '192.169.0.0'],
      ['198.19.255.255', /benchmarking address \(198\.18\.0\.0\/15\)/, '198.20.0.0'],
      ['198.51.100.7', /documentation address \(TEST-NET-2\) \(198\.51\.100\.0\/24\)/, '198.51.101.0'],
      ['203.0.113.255', /documentation address \(TEST-NET-3\) \(203\.0\.113\.0\/24\)/, '203.0.112.255'],
      ['224.0.0.1', /a multicast address \(224\.0\.0\.0\/4\)/, '223.255.255.255'],
      ['240.0.0.1', /a reserved address \(240\.0\.0\.0\/4\)/, undefined],
      ['255.255.255.255', /limited broadcast address/, undefined],
      ['::', /the unspecified address/, undefined],
      ['::1', /a loopback address \(::1\/128\)/, undefined],
      ['[::1]', /a loopback address/, undefined],
      ['::a00:1', /IPv4-compatible address/, undefined],
      ['64:ff9b::808:808', /a NAT64 address \(64:ff9b::\/96\)/, undefined],
      ['64:ff9b:1::1', /local-use NAT64 address \(64:ff9b:1::\/48\)/, undefined],
      ['100::1', /discard-only address \(100::\/64\)/, undefined],
      ['2001::1', /IETF protocol assignment .*\(2001::\/23\)/, '2001:200::1'],
      ['2001:1ff:ffff::1', /2001::\/23/, '2001:200::'],
      ['2001:db8::1', /a documentation address \(2001:db8::\/32\)/, '2001:db9::1'],
      ['2001:db8:ffff:ffff::1', /2001:db8::\/32/, '2001:db7:ffff::1'],
      ['3fff:fff::1', /a documentation address \(3fff::\/20\)/, '3fff:1000::1'],
      ['5f00::1', /segment-routing \(SRv6\) address \(5f00::\/16\)/, undefined],
      ['fd12:3456::1', /unique local \(private\) address \(fc00::\/7\)/, undefined],
      ['fe80::1', /a link-local address \(fe80::\/10\)/, undefined],
      ['fe80::1%eth0', /a link-local address/, undefined],
      ['fec0::1', /site-local address/, undefined],
      ['ff02::1', /a multicast address \(ff00::\/8\)/, undefined],
      ['4000::1', /outside IPv6 global unicast \(2000::\/3\)/, '3fff:ffff::1'],
    ];
    for (const [inside, kind, outside] of ranges) {
      assert.match(specialAddress(inside) ?? 'allowed', kind, inside);
      if (outside) assert.equal(specialAddress(outside), undefined, `${outside} is just outside ${inside}'s range`);
    }
    for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '2002:808:808::1'])
      assert.equal(isPrivateAddress(address), false, address);
  });

  test('IPv6 addresses that carry an IPv4 one (mapped, 6to4) are judged by that IPv4 address', () => {
    assert.match(specialAddress('::ffff:127.0.0.1')!, /IPv4-mapped address of 127\.0\.0\.1, a loopback address/);
    assert.match(specialAddress('::ffff:7f00:1')!, /IPv4-mapped address of 127\.0\.0\.1/, 'as URL spells it');
    assert.match(specialAddress('::ffff:a9fe:a9fe')!, /of 169\.254\.169\.254, a link-local address/);
    assert.match(specialAddress('2002:7f00:1::1')!, /a 6to4 address of 127\.0\.0\.1, a loopback address/);
    assert.match(specialAddress('2002:c000:201::')!, /a 6to4 address of 192\.0\.2\.1, a documentation address/);
    assert.match(specialAddress('2002:a00:1::1')!, /6to4 address of 10\.0\.0\.1, a private address/);
    assert.equal(specialAddress('2002:808:808::1'), undefined, '6to4 of the public 8.8.8.8');
    // NAT64 is refused whatever it carries: the translator may sit inside the private network.
    assert.match(specialAddress('64:ff9b::7f00:1')!, /a NAT64 address/);
    assert.match(specialAddress('64:ff9b::8.8.8.8')!, /a NAT64 address/);
  });

  test("this host's own interface addresses are refused, read when checked (not at start-up)", (t) => {
    const fake = { address: '93.184.215.14', netmask: '255.255.255.0', family: 'IPv4', internal: false };
    assert.equal(specialAddress('93.184.215.14'), undefined, 'a public address, before it is ours');
    const interfaces = os.networkInterfaces();
    t.mock.method(os, 'networkInterfaces', () => ({
      ...interfaces,
      wan0: [
        { ...fake, mac: '02:00:00:00:00:09', cidr: '93.184.215.14/24' },
        {
          address: '2a00:1450:4001::5',
          netmask: 'ffff:ffff:ffff:ffff::',
          family: 'IPv6',
          internal: false,
          mac: '02:00:00:00:00:09',
          cidr: '2a00:1450:4001::5/64',
          scopeid: 0,
        },
      ],
    }));
    assert.equal(specialAddress('93.184.215.14'), "this host's own address (interface wan0)");
    assert.equal(specialAddress('2a00:1450:4001:0:0:0:0:5'), "this host's own address (interface wan0)");
    assert.match(specialAddress('::ffff:93.184.215.14')!, /IPv4-mapped address of 93\.184\.215\.14, this host's own/);
    assert.equal(specialAddress('93.184.215.15'), undefined, 'the neighbour is not ours');
    assert.match(
      addressRefusal('93.184.215.14', policy())!,
      /^93\.184\.215\.14 is this host's own address \(interface wan0\); these are refused unless web\.allow_private is true$/,
    );
    assert.equal(addressRefusal('93.184.215.14', policy({ allow_private: true })), undefined);
  });

  test("the host's real non-loopback addresses are refused (loopback is named as loopback)", () => {
    const external = Object.entries(os.networkInterfaces()).flatMap(([name, entries]) =>
      (entries ?? []).filter((entry) => !entry.internal).map((entry) => ({ name, address: entry.address })),
    );
    for (const { name, address } of external)
      assert.equal(specialAddress(address), `this host's own address (interface ${name})`, address);
    assert.match(specialAddress('127.0.0.1')!, /^a loopback address/);
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
    assert.equal(
      urlRefusal('http://169.254.169.254/latest/meta-data/', policy()),
      '169.254.169.254 is a link-local address (169.254.0.0/16); these are refused unless web.allow_private is true',
    );
    assert.match(
      urlRefusal('http://[::ffff:127.0.0.1]:80/', policy())!,
      /IPv4-mapped address of 127\.0\.0\.1, a loopback/,
    );
    assert.match(urlRefusal('http://[2002:7f00:1::]/', policy())!, /6to4 address of 127\.0\.0\.1/);
    assert.match(urlRefusal('http://[2001:db8::1]/', policy())!, /documentation address/);
    assert.match(
      urlRefusal('http://2130706433/', policy())!,
      /loopback/,
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
    const port = new URL(site.url).port;
    await assert.rejects(
      fetchUrl(`${site.url}/to-localhost`, policy({ allow_private: true, deny_domains: ['localhost'] }), limits),
      {
        message: `refused by the network policy: redirect from ${site.url}/to-localhost to http://localhost:${port}/article: localhost is in web.deny_domains (localhost)`,
      },
    );
    assert.equal(site.hits.get('/article'), undefined);
    const followed = await fetchUrl(`${site.url}/r3`, policy({ allow_private: true }), limits);
    assert.equal(followed.finalUrl, `${site.url}/article`);
    assert.equal(followed.redirects.length, 3);
  });

  test('web.allow_private_origins lets exactly that host and port through; every other private address stays refused', async (t) => {
    const site = await startWebStandIn();
    t.after(() => site.close());
    const { port } = new URL(site.url);
    const listed = policy({ allow_private_origins: [site.url] });
    assert.equal(urlRefusal(`${site.url}/article`, listed), undefined);
    assert.match(urlRefusal(`http://127.0.0.1:${Number(port) + 1}/`, listed)!, /127\.0\.0\.1 is a loopback address/);
    assert.match(urlRefusal('http://127.0.0.2/', listed)!, /loopback/);
    assert.match(urlRefusal('http://169.254.169.254/', listed)!, /link-local/);
    // The same server under another name is another origin.
    assert.match((await checkUrl(`http://localhost:${port}/`, listed))!, /localhost resolves to 127\.0\.0\.1/);
    assert.equal(
      await checkUrl(`http://localhost:${port}/`, policy({ allow_private_origins: [`http://localhost:${port}`] })),
      undefined,
    );
    const fetched = await fetchUrl(`${site.url}/r2`, listed, limits);
    assert.equal(fetched.finalUrl, `${site.url}/article`, 'redirects within the listed origin are followed');
    await assert.rejects(fetchUrl(`${site.url}/to-localhost`, listed, limits), {
      message: new RegExp(
        `^refused by the network policy: redirect from ${site.url}/to-localhost to http://localhost:${port}/article: localhost resolves to 127\\.0\\.0\\.1, a loopback address`,
      ),
    });
    assert.match(
      urlRefusal(`${site.url}/`, policy({ deny_domains: ['127.0.0.1'], allow_private_origins: [site.url] }))!,
      /deny_domains/,
    );
  });

  test('web.allow_private_origins takes origins only (scheme, host, port)', () => {
    for (const origin of ['http://127.0.0.1:8080', 'https://localhost', 'http://[::1]:3000/'])
      assert.equal(policy({ allow_private_origins: [origin] }).allow_private_origins?.[0], origin);
    for (const bad of ['127.0.0.1:8080', 'http://127.0.0.1:8080/admin', 'ftp://host', 'http://u:p@host', 'http://h/?q'])
      assert.throws(
        () => policy({ allow_private_origins: [bad] }),
        /must be an origin such as http:\/\/127\.0\.0\.1:8080/,
        bad,
      );
    assert.equal('allow_private_origins' in policy(), false, 'absent unless set: run fingerprints do not change');
  });
});
