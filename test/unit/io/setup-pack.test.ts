/**
 * The setup pack: reproducible bytes, a real multi-page A4 guide (checked with poppler's `pdfinfo` and
 * `pdftotext`), prompts that name the endpoints they rely on, and a template whose placeholders all resolve.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseGuide } from '../../../io/documents/guide-markdown.ts';
import { renderGuidePdf } from '../../../io/documents/guide-pdf.ts';
import {
  BASE_URL_TOKEN,
  buildSetupPack,
  GUIDE_NAME,
  type PackFile,
  readSetupPackSource,
  type SetupPack,
  type SetupPackSource,
} from '../../../io/documents/setup-pack.ts';

const BASE = 'https://spotcheck.example';
let source: SetupPackSource;
let pack: SetupPack;
let dir: string;
let pdfPath: string;

const bytesOf = (file: PackFile) => Buffer.from(file.content_base64, 'base64');
const textOf = (file: PackFile) => bytesOf(file).toString('utf8');
const tool = (name: string, ...args: string[]) => execFileSync(name, args, { encoding: 'utf8' });

beforeAll(async () => {
  source = await readSetupPackSource();
  pack = await buildSetupPack(source, { baseUrl: `${BASE}/` });
  dir = mkdtempSync(join(tmpdir(), 'setup-pack-'));
  pdfPath = join(dir, GUIDE_NAME);
  writeFileSync(pdfPath, bytesOf(pack.files.guide));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('buildSetupPack', () => {
  it('gives byte-identical files on every build', async () => {
    const again = await buildSetupPack(await readSetupPackSource(), { baseUrl: BASE });
    expect(again.files.guide.sha256).toBe(pack.files.guide.sha256);
    expect(JSON.stringify(again)).toBe(JSON.stringify(pack));
  });

  it('describes each file truthfully (length, SHA-256, media type)', () => {
    const all = [...pack.files.prompts, ...pack.files.templates, pack.files.guide];
    for (const file of all) {
      const bytes = bytesOf(file);
      expect(file.bytes, file.name).toBe(bytes.length);
      const digest = execFileSync('sha256sum', { input: bytes, encoding: 'utf8' }).split(' ')[0];
      expect(file.sha256, file.name).toBe(digest);
    }
    expect(pack.files.prompts.map((file) => file.media_type)).toEqual(
      pack.files.prompts.map(() => 'text/markdown'),
    );
    expect(pack.files.templates.map((file) => [file.name, file.media_type])).toEqual([
      ['morning-report.html', 'text/html'],
    ]);
    expect(pack.files.guide).toMatchObject({
      name: 'spotcheck-overnight-guide.pdf',
      media_type: 'application/pdf',
    });
    expect(bytesOf(pack.files.guide).subarray(0, 5).toString('latin1')).toBe('%PDF-');
  });

  it('puts the service origin where the sources say {{SPOTCHECK_BASE_URL}}, without a doubled slash', async () => {
    for (const file of [...pack.files.prompts, ...pack.files.templates]) {
      expect(textOf(file), file.name).not.toContain(BASE_URL_TOKEN);
      expect(textOf(file), file.name).not.toContain(`${BASE}//`);
    }
    expect(textOf(pack.files.prompts[0] as PackFile)).toContain(
      `${BASE}/v1/products/endpoint-spot-check?url=`,
    );
    const other = await buildSetupPack(source, { baseUrl: 'https://other.example' });
    expect(other.files.guide.sha256).not.toBe(pack.files.guide.sha256);
    expect(textOf(other.files.prompts[1] as PackFile)).toContain(
      'https://other.example/v1/products/payment-status',
    );
  });
});

describe('the prompts', () => {
  const must: Record<string, string[]> = {
    '01-before-paying.md': [
      '/v1/products/endpoint-spot-check',
      'claimed_price=',
      'pay_to=',
      'payment_terms_sha256',
      '`pay`',
      '`skip`',
      '`recheck`',
      'payment.amount.atomic',
      '@spotcheck/x402-guard',
      'payment_required',
      '`challenge_mismatch`',
    ],
    '02-after-paying.md': [
      'POST https://spotcheck.example/v1/products/payment-status',
      '"payment_payload"',
      '"safe_to_resign": true',
      '`landed`',
      '`pending`',
      '`not_landed`',
      '`unknown`',
      '@spotcheck/x402-guard',
    ],
    '03-morning-report.md': [
      '/v1/receipts/',
      'receipt_url',
      'badge.html',
      'morning-report.html',
      'payment-status',
    ],
    '04-budget-rules.md': ['NIGHT_BUDGET_USD', 'payment_terms_sha256', 'safe_to_resign', 'eip155:8453'],
  };

  it('are the four numbered files, in reading order', () => {
    expect(pack.files.prompts.map((file) => file.name)).toEqual(Object.keys(must));
  });

  it.each(Object.entries(must))('%s is substantial and names what it relies on', (name, needles) => {
    const file = pack.files.prompts.find((item) => item.name === name);
    expect(file).toBeDefined();
    const text = textOf(file as PackFile);
    expect(text.length).toBeGreaterThan(1500);
    expect(text.startsWith('# ')).toBe(true);
    for (const needle of needles) expect(text, `${name} should mention ${needle}`).toContain(needle);
  });
});

describe('the morning-report template', () => {
  const template = () => textOf(pack.files.templates[0] as PackFile);

  it('has a placeholder for every field the report shows, receipt links and badges included', () => {
    for (const name of [
      '{{receipt_url}}',
      '{{{badge_html}}}',
      '{{tx_hash}}',
      '{{spent_usd}}',
      '{{report_date}}',
    ]) {
      expect(template()).toContain(name);
    }
    expect(template()).toContain(`href="${BASE}/.well-known/jwks.json"`);
  });

  it('documents every placeholder it uses in its header comment', () => {
    const [comment = '', body = ''] = template().split('-->');
    const used = new Set([...body.matchAll(/\{\{\{?[#^/]?(\w+)\}?\}\}/g)].map((match) => match[1] ?? ''));
    expect(used.size).toBeGreaterThan(20);
    for (const name of used) expect(comment, name).toMatch(new RegExp(`\\b${name}\\b`));
    expect(comment).not.toContain('{{');
  });

  it('renders with a Mustache-style fill: every section closes and no placeholder is left', () => {
    const row = { receipt_url: 'https://s.example/v1/receipts/sc-x', badge_html: '<a href="x"><img></a>' };
    const html = render(template(), {
      report_date: '2026-08-02',
      purchases: [{ ...row, verdict: 'pay', tx_hash: '0xab' }],
      skips: [{ ...row, verdict: 'skip', reason_code: 'pay_to_mismatch' }],
      open_questions: [],
      agent_name: 'A <b>',
    });
    expect(html).not.toMatch(/\{\{|\}\}/);
    expect(html).toContain('<td><a href="x"><img></a></td>');
    expect(html).toContain('Agent A &lt;b&gt;,');
    expect(html).toContain('<span class="v-skip">skip</span> <code>pay_to_mismatch</code>');
    expect(html).toContain('Nothing is open');
    expect(html).not.toContain('Nothing was bought tonight');
  });
});

describe('the PDF guide', () => {
  it('is a real multi-page A4 document with fixed metadata', () => {
    const info = tool('pdfinfo', pdfPath);
    const pages = Number(/^Pages:\s+(\d+)/m.exec(info)?.[1]);
    expect(pages).toBeGreaterThanOrEqual(3);
    expect(info).toMatch(/^Page size:\s+595\.28 x 841\.89 pts \(A4\)/m);
    expect(info).toMatch(/^Title:\s+Spotcheck overnight guide$/m);
    expect(info).toMatch(/^Producer:\s+Spotcheck/m);
    expect(info).toMatch(/^CreationDate:\s+Thu Nov 26 00:00:00 2026 UTC$/m);
  });

  it('carries every heading of guide.md, a contents page and page numbers, in extractable text', () => {
    const text = tool('pdftotext', '-layout', pdfPath, '-');
    const headings = parseGuide(source.guide).blocks.flatMap((block) =>
      block.kind === 'h1' || block.kind === 'h2' ? [block.text] : [],
    );
    expect(headings.length).toBeGreaterThan(10);
    for (const heading of headings) expect(text, heading).toContain(heading);
    const pages = text.split('\f').filter((page) => page.trim() !== '');
    expect(pages[0]).toMatch(/Contents[\s\S]*The check before paying\s+\d/);
    for (const [index, page] of pages.entries())
      expect(page).toContain(`Page ${index + 1} of ${pages.length}`);
    expect(text).toContain('0c271d2bc5ce4dfeb20be3246b101fc3708540990b092c74a9a2856ddf13f4e0');
    expect(text).toContain(`${BASE}/v1/products/payment-status`);
    // The guard section: the package, its one call with this service's origin, and the refusal it explains.
    expect(text).toContain("import { attachGuard } from '@spotcheck/x402-guard';");
    expect(text).toContain(`service: '${BASE}',`);
    expect(text).toContain('challenge_mismatch');
  });

  it('wraps long lines inside the page and refuses text the standard fonts cannot encode', async () => {
    const long = `---\ntitle: T\nsubtitle: S\nedition: 2026-01-01\n---\n# H\n\n${'word '.repeat(1500)} https://${'a'.repeat(400)}\n\n\`\`\`\n${'x'.repeat(300)}\n\`\`\`\n`;
    const pdf = await renderGuidePdf(parseGuide(long));
    const path = join(dir, 'long.pdf');
    writeFileSync(path, pdf);
    expect(Number(/^Pages:\s+(\d+)/m.exec(tool('pdfinfo', path))?.[1])).toBeGreaterThanOrEqual(3);
    const bbox = tool('pdftotext', '-bbox', path, '-');
    const right = Math.max(...[...bbox.matchAll(/xMax="([\d.]+)"/g)].map((match) => Number(match[1])));
    expect(right).toBeLessThanOrEqual(595.28 - 55);
    const bad = long.replace('# H', '# H \u2713');
    await expect(renderGuidePdf(parseGuide(bad))).rejects.toThrow(/WinAnsi cannot encode/);
  });
});

describe('parseGuide', () => {
  it('reads front matter, headings, list items with continuation lines, code and paragraphs', () => {
    const guide = parseGuide(
      '---\ntitle: T\nsubtitle: S: more\nedition: 2026-08-01\n---\n# One\n## Two\nA para\ncontinues.\n\n- item\n  goes on\n2. next\n```\n  code  \n```\n',
    );
    expect(guide.meta).toEqual({ title: 'T', subtitle: 'S: more', edition: '2026-08-01' });
    expect(guide.blocks).toEqual([
      { kind: 'h1', text: 'One' },
      { kind: 'h2', text: 'Two' },
      { kind: 'p', text: 'A para continues.' },
      { kind: 'li', marker: '\u2022', text: 'item goes on' },
      { kind: 'li', marker: '2.', text: 'next' },
      { kind: 'code', lines: ['  code'] },
    ]);
  });

  it.each([
    ['no front matter', '# One\n', /front matter/],
    ['no edition', '---\ntitle: T\nsubtitle: S\n---\n', /edition/],
    ['bad edition', '---\ntitle: T\nsubtitle: S\nedition: August\n---\n', /YYYY-MM-DD/],
    ['open code block', '---\ntitle: T\nsubtitle: S\nedition: 2026-08-01\n---\n```\nx\n', /never closed/],
  ])('rejects %s', (_name, text, message) => {
    expect(() => parseGuide(text)).toThrow(message);
  });
});

type View = Record<string, unknown>;

/** A minimal Mustache renderer (variables, raw triple braces, sections over lists, inverted sections). */
function render(template: string, view: View): string {
  const escaped = (value: unknown) =>
    String(value ?? 'not recorded').replace(
      /[&<>"']/g,
      (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch] ?? ch,
    );
  const sections = template.replace(
    /\{\{([#^])(\w+)\}\}([\s\S]*?)\{\{\/\2\}\}/g,
    (_all, kind, name, inner) => {
      const list = (view[name] as View[] | undefined) ?? [];
      if (kind === '^') return list.length === 0 ? inner : '';
      return list.map((item) => render(inner, { ...view, ...item })).join('');
    },
  );
  return sections
    .replace(/\{\{\{(\w+)\}\}\}/g, (_all, name) => String(view[name] ?? ''))
    .replace(/\{\{(\w+)\}\}/g, (_all, name) => escaped(view[name]));
}
