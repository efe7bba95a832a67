/**
 * The small Markdown subset the setup-pack guide is written in (`data/setup-pack/guide.md`): front matter,
 * `#`/`##` headings, paragraphs, `-` and `1.` list items, fenced code, and inline `**bold**` and `` `code` ``.
 * Anything else is read as paragraph text, so a typo shows up in the PDF instead of vanishing.
 */

/** The guide's front matter: `title`, `subtitle`, `edition` (a `YYYY-MM-DD` date, also the PDF's dates). */
export type GuideMeta = { title: string; subtitle: string; edition: string };

/** One block of the guide, in reading order. */
export type GuideBlock =
  | { kind: 'h1' | 'h2' | 'p'; text: string }
  | { kind: 'li'; marker: string; text: string }
  | { kind: 'code'; lines: string[] };

/** Styles of inline text. */
export type InlineStyle = 'regular' | 'bold' | 'mono';

/** A stretch of inline text in one style. */
export type Span = { text: string; style: InlineStyle };

/** A parsed guide. */
export type Guide = { meta: GuideMeta; blocks: GuideBlock[] };

const ITEM = /^(-|\d+\.)\s+(.*)$/;

/** Parses the guide text; throws when the front matter is missing a member (a build-time bug, not input). */
export function parseGuide(source: string): Guide {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const meta = frontMatter(lines);
  const blocks: GuideBlock[] = [];
  let open: { kind: 'p'; text: string } | { kind: 'li'; marker: string; text: string } | null = null;
  let code: string[] | null = null;
  const close = () => {
    if (open) blocks.push(open);
    open = null;
  };

  for (const line of lines.slice(meta.bodyStart)) {
    if (code) {
      if (line.trimEnd() === '```') {
        blocks.push({ kind: 'code', lines: code });
        code = null;
      } else code.push(line.trimEnd());
      continue;
    }
    const trimmed = line.trim();
    const item = ITEM.exec(trimmed);
    if (trimmed.startsWith('```')) {
      close();
      code = [];
    } else if (trimmed === '') close();
    else if (trimmed.startsWith('## ')) {
      close();
      blocks.push({ kind: 'h2', text: trimmed.slice(3).trim() });
    } else if (trimmed.startsWith('# ')) {
      close();
      blocks.push({ kind: 'h1', text: trimmed.slice(2).trim() });
    } else if (item && !line.startsWith(' ')) {
      close();
      open = { kind: 'li', marker: item[1] === '-' ? '\u2022' : (item[1] ?? ''), text: item[2] ?? '' };
    } else if (open) open.text += ` ${trimmed}`;
    else open = { kind: 'p', text: trimmed };
  }
  if (code) throw new SyntaxError('guide: a code block is never closed');
  close();
  return { meta: meta.value, blocks };
}

/** Splits inline text into styled spans: `**bold**` and `` `code` `` (no nesting, as the guide needs none). */
export function inlineSpans(text: string): Span[] {
  const spans: Span[] = [];
  const pattern = /\*\*([^*]+)\*\*|`([^`]+)`/g;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    if (match.index > last) spans.push({ text: text.slice(last, match.index), style: 'regular' });
    if (match[1] !== undefined) spans.push({ text: match[1], style: 'bold' });
    else spans.push({ text: match[2] ?? '', style: 'mono' });
    last = match.index + match[0].length;
  }
  if (last < text.length) spans.push({ text: text.slice(last), style: 'regular' });
  return spans;
}

function frontMatter(lines: string[]): { value: GuideMeta; bodyStart: number } {
  if (lines[0]?.trim() !== '---') throw new SyntaxError('guide: front matter (---) missing');
  const end = lines.indexOf('---', 1);
  if (end < 0) throw new SyntaxError('guide: front matter is never closed');
  const fields = new Map<string, string>();
  for (const line of lines.slice(1, end)) {
    const at = line.indexOf(':');
    if (at > 0) fields.set(line.slice(0, at).trim(), line.slice(at + 1).trim());
  }
  const get = (name: keyof GuideMeta) => {
    const value = fields.get(name);
    if (!value) throw new SyntaxError(`guide: front matter has no ${name}`);
    return value;
  };
  const edition = get('edition');
  if (!/^\d{4}-\d{2}-\d{2}$/.test(edition)) throw new SyntaxError('guide: edition must be YYYY-MM-DD');
  return { value: { title: get('title'), subtitle: get('subtitle'), edition }, bodyStart: end + 1 };
}
