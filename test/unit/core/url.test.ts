import { describe, expect, it } from 'vitest';
import { MAX_URL_LENGTH, normalizeUrl, parseTargetUrl } from '../../../core/url.ts';

describe('normalizeUrl', () => {
  // docs/api.md §2.10 `dedupe`: lower-case scheme and host, no default port, no fragment, no trailing slash, sorted query.
  it.each([
    ['https://a.example/', 'https://a.example'],
    ['https://a.example', 'https://a.example'],
    ['HTTPS://A.EXAMPLE/', 'https://a.example'],
    ['HtTp://Api.Example.COM/Weather', 'http://api.example.com/Weather'],
    ['https://a.example/Path/To/', 'https://a.example/Path/To'],
    ['https://a.example/a//', 'https://a.example/a'],
    ['https://a.example:443/x', 'https://a.example/x'],
    ['http://a.example:80/x', 'http://a.example/x'],
    ['http://a.example:443/x', 'http://a.example:443/x'],
    ['https://a.example:80/x', 'https://a.example:80/x'],
    ['https://a.example:8443/x/', 'https://a.example:8443/x'],
    ['https://a.example/x#frag', 'https://a.example/x'],
    ['https://a.example/#', 'https://a.example'],
    ['https://a.example/x?', 'https://a.example/x'],
    ['https://a.example/x?#top', 'https://a.example/x'],
    ['https://a.example/x?b=2&a=1', 'https://a.example/x?a=1&b=2'],
    ['https://a.example/x?b=1&a=2&b=0&a=1', 'https://a.example/x?a=2&a=1&b=1&b=0'],
    ['https://a.example/x/?z=1#f', 'https://a.example/x?z=1'],
    ['https://a.example?b=2&a=1', 'https://a.example?a=1&b=2'],
    ['https://a.example/x?q=a%20b', 'https://a.example/x?q=a+b'],
    ['https://a.example/x?flag', 'https://a.example/x?flag='],
    ['https://BÜCHER.example/Buch', 'https://xn--bcher-kva.example/Buch'],
    ['https://xn--bcher-kva.example/', 'https://xn--bcher-kva.example'],
    ['http://[2001:DB8::1]:80/x', 'http://[2001:db8::1]/x'],
    ['https://[::1]:8443/', 'https://[::1]:8443'],
    ['http://[0:0:0:0:0:0:0:1]/', 'http://[::1]'],
    ['http://127.0.0.1:80/', 'http://127.0.0.1'],
    ['https://user:pw@A.example/x/', 'https://a.example/x'],
    ['https://a.example/%7Efoo/%2F', 'https://a.example/%7Efoo/%2F'],
    ['https://a.example/a b', 'https://a.example/a%20b'],
    ['https://a.example./x', 'https://a.example./x'],
  ])('%s → %s', (input, expected) => {
    expect(normalizeUrl(input)).toBe(expected);
  });

  it('accepts a URL object and does not mutate it', () => {
    const url = new URL('https://A.example:443/x/?b=1&a=2#f');
    expect(normalizeUrl(url)).toBe('https://a.example/x?a=2&b=1');
    expect(url.href).toBe('https://a.example/x/?b=1&a=2#f');
  });

  it('is idempotent', () => {
    for (const input of ['https://A.example:443/x/?b=1&a=2#f', 'http://[::1]/', 'https://a.example/x?flag']) {
      const once = normalizeUrl(input);
      expect(normalizeUrl(once)).toBe(once);
    }
  });

  it('throws TypeError for a string that is not a URL', () => {
    expect(() => normalizeUrl('not a url')).toThrow(TypeError);
  });
});

describe('parseTargetUrl', () => {
  it('returns the URL and its normalized form', () => {
    const result = parseTargetUrl('HTTPS://API.example/x/?b=2&a=1#f');
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.normalized).toBe('https://api.example/x?a=1&b=2');
    expect(result.url.hostname).toBe('api.example');
  });

  it('names the URL as requested: trailing slash and query order kept, the fragment (never sent) dropped', () => {
    const result = parseTargetUrl('HTTPS://API.example:443/x/?b=2&a=1#f');
    expect(result.ok && result.url.href).toBe('https://api.example/x/?b=2&a=1');
  });

  it.each([
    ['http://a.example/x'],
    ['https://a.example'],
    ['http://127.0.0.1:22/'],
    ['http://[::1]/'],
    ['http://10.0.0.1:6379'],
  ])('lets the SSRF gate judge %s', (input) => {
    expect(parseTargetUrl(input).ok).toBe(true);
  });

  it.each([
    ['', 'empty'],
    ['a.example/x', 'not an absolute URL'],
    ['/relative/path', 'not an absolute URL'],
    ['ftp://a.example/file', 'only http and https'],
    ['file:///etc/passwd', 'only http and https'],
    ['javascript:alert(1)', 'only http and https'],
    ['data:text/plain,hi', 'only http and https'],
    ['ws://a.example/', 'only http and https'],
    ['http://', 'not an absolute URL'],
    ['https://exa\nmple.com/', 'control characters'],
    ['https://user:pw@a.example/', 'user name or password'],
    ['https://user@a.example/', 'user name or password'],
    ['https://:pw@a.example/', 'user name or password'],
    ['https://example.com/\tx', 'control characters'],
    ['https://[::1/', 'not an absolute URL'],
  ])('refuses %j (%s)', (input, message) => {
    const result = parseTargetUrl(input);
    expect(result).toMatchObject({ ok: false, code: 'bad_url' });
    if (!result.ok) expect(result.message).toContain(message);
  });

  it('accepts exactly 2048 characters and refuses 2049', () => {
    const base = 'https://a.example/';
    const at = base + 'x'.repeat(MAX_URL_LENGTH - base.length);
    expect(at.length).toBe(2048);
    expect(parseTargetUrl(at).ok).toBe(true);
    expect(parseTargetUrl(`${at}x`)).toMatchObject({ ok: false, code: 'bad_url' });
  });

  it('does not throw on non-string input', () => {
    expect(parseTargetUrl(42 as unknown as string)).toMatchObject({ ok: false, code: 'bad_url' });
  });
});
