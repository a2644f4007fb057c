const TEXTUAL = /^(text\/|application\/([\w.+-]*\+)?(json|xml|javascript|x-www-form-urlencoded|yaml|x-yaml|graphql)\b)/i;

/** A response body as text when it is text (by content type, or valid UTF-8 when untyped), else base64. */
export function describeBody(body: Buffer, contentType: string | undefined): { body: string; bodyEncoding: 'utf8' | 'base64' } {
  if (contentType && TEXTUAL.test(contentType.trim())) return { body: body.toString('utf8'), bodyEncoding: 'utf8' };
  if (!contentType) {
    try {
      return { body: new TextDecoder('utf-8', { fatal: true }).decode(body), bodyEncoding: 'utf8' };
    } catch {
      // not UTF-8: fall through to base64
    }
  }
  return { body: body.toString('base64'), bodyEncoding: 'base64' };
}
