import { describe, expect, it } from 'vitest';
import { decodeBase64Utf8 } from '../../../core/base64.ts';

describe('decodeBase64Utf8', () => {
  it('decodes UTF-8 text with or without padding', () => {
    const text = '{"payTo":"0xabc","note":"é ✓ 💸"}';
    const padded = btoa(String.fromCharCode(...new TextEncoder().encode(text)));
    expect(padded.endsWith('=')).toBe(true);
    expect(decodeBase64Utf8(padded)).toBe(text);
    expect(decodeBase64Utf8(padded.replace(/=+$/, ''))).toBe(text);
  });

  it('throws on bytes that are not UTF-8 and on text that is not base64', () => {
    expect(() => decodeBase64Utf8(btoa('\xff\xfe'))).toThrow();
    expect(() => decodeBase64Utf8('not base64!')).toThrow();
  });
});
