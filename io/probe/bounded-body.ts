/**
 * Reading a body someone else sends (a caller's request, a seller's paid answer) without buffering more than a
 * limit: the stream is cancelled as soon as it passes the limit.
 */

/**
 * The body as UTF-8 text (invalid bytes replaced), or `truncated: true` with no text once it exceeds `limit` bytes.
 * @example await readBoundedText(response.body, 1024) // { text: '{"ok":true}', truncated: false }
 */
export async function readBoundedText(
  body: ReadableStream<Uint8Array> | null,
  limit: number,
): Promise<{ text: string; truncated: boolean }> {
  if (!body) return { text: '', truncated: false };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return { text: '', truncated: true };
    }
    chunks.push(value);
  }
  return { text: new TextDecoder('utf-8', { fatal: false }).decode(Buffer.concat(chunks)), truncated: false };
}
