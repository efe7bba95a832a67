/**
 * The setup pack `overnight-cos-pack` (docs/api.md §1.5, §2.9, docs/api.md §1.5): the prompt files, the
 * morning-report template and the PDF guide, read from `data/setup-pack/` and built once at start-up.
 *
 * The files say `{{SPOTCHECK_BASE_URL}}` wherever the service's own address belongs; the build puts the
 * deployment's public origin (`BASE_URL`) there, so the prompts a buyer gets call the host that sold them.
 * The same sources and base URL always give the same bytes and hashes, the PDF included (see `guide-pdf.ts`).
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseGuide } from './guide-markdown.ts';
import { renderGuidePdf } from './guide-pdf.ts';

/** Where the pack's sources live in the repository. */
export const SETUP_PACK_DIR: string = fileURLToPath(new URL('../../data/setup-pack/', import.meta.url));

/** The token the sources use for the service's public origin. */
export const BASE_URL_TOKEN = '{{SPOTCHECK_BASE_URL}}';

/** The file name the guide is delivered under. */
export const GUIDE_NAME = 'spotcheck-overnight-guide.pdf';

/** The pack's sources as text, file names sorted (the prompts are numbered to read in order). */
export type SetupPackSource = {
  prompts: Array<{ name: string; text: string }>;
  templates: Array<{ name: string; text: string }>;
  guide: string;
};

/** One delivered file: its bytes in base64, with their length and SHA-256 (hex) so a buyer can check them. */
export type PackFile = {
  name: string;
  media_type: string;
  bytes: number;
  sha256: string;
  content_base64: string;
};

/** The built pack: what the product answer carries besides price and access (docs/api.md §2.9). */
export type SetupPack = {
  product: 'overnight-cos-pack';
  title: string;
  /** The guide's edition date (`YYYY-MM-DD`), also the PDF's creation date. */
  edition: string;
  files: { prompts: PackFile[]; templates: PackFile[]; guide: PackFile };
};

/** Reads the sources from `dir` (default {@link SETUP_PACK_DIR}). */
export async function readSetupPackSource(dir: string = SETUP_PACK_DIR): Promise<SetupPackSource> {
  const readAll = async (folder: string, suffix: string) => {
    const names = (await readdir(join(dir, folder))).filter((name) => name.endsWith(suffix)).sort();
    return Promise.all(
      names.map(async (name) => ({ name, text: await readFile(join(dir, folder, name), 'utf8') })),
    );
  };
  const [prompts, templates, guide] = await Promise.all([
    readAll('prompts', '.md'),
    readAll('templates', '.html'),
    readFile(join(dir, 'guide.md'), 'utf8'),
  ]);
  if (prompts.length === 0 || templates.length === 0)
    throw new Error(`setup pack: no prompts or templates in ${dir}`);
  return { prompts, templates, guide };
}

/** Builds the pack for the service at `baseUrl` (the public origin, no trailing slash needed). */
export async function buildSetupPack(
  source: SetupPackSource,
  options: { baseUrl: string },
): Promise<SetupPack> {
  const base = options.baseUrl.replace(/\/+$/, '');
  const fill = (text: string) => text.replaceAll(BASE_URL_TOKEN, base);
  const encoder = new TextEncoder();
  const guide = parseGuide(fill(source.guide));
  const pdf = await renderGuidePdf(guide);
  return {
    product: 'overnight-cos-pack',
    title: 'Overnight x402 buying: setup pack',
    edition: guide.meta.edition,
    files: {
      prompts: source.prompts.map((file) =>
        packFile(file.name, 'text/markdown', encoder.encode(fill(file.text))),
      ),
      templates: source.templates.map((file) =>
        packFile(file.name, 'text/html', encoder.encode(fill(file.text))),
      ),
      guide: packFile(GUIDE_NAME, 'application/pdf', pdf),
    },
  };
}

/** Reads and builds the pack in one step: what the API does once at start-up. */
export async function loadSetupPack(options: { baseUrl: string; dir?: string }): Promise<SetupPack> {
  return buildSetupPack(await readSetupPackSource(options.dir), { baseUrl: options.baseUrl });
}

function packFile(name: string, mediaType: string, bytes: Uint8Array): PackFile {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return {
    name,
    media_type: mediaType,
    bytes: bytes.byteLength,
    sha256: createHash('sha256').update(buffer).digest('hex'),
    content_base64: buffer.toString('base64'),
  };
}
