// What a tool call, a prompt or a resource answered, shown to a person: text, JSON, images and audio
// (base64 from the result, shown as data: URLs of image and audio types only), the outcome, the
// duration, the service that answered and the trace and request ids to find the call in logs.

import { h, pretty } from './dom.js';

const MEDIA_TYPE = /^(image\/(png|jpeg|gif|webp|bmp|avif|svg\+xml)|audio\/[a-z0-9.+-]+)$/i;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const MAX_MEDIA = 8;

/** A data: URL for base64 media of an image or audio type; undefined for anything else. */
function dataUrl(mimeType, data) {
  if (typeof mimeType !== 'string' || typeof data !== 'string') return undefined;
  const compact = data.replace(/\s+/g, '');
  if (!MEDIA_TYPE.test(mimeType) || compact.length === 0 || !BASE64.test(compact)) return undefined;
  return `data:${mimeType.toLowerCase()};base64,${compact}`;
}

const sizeText = (bytes) => (bytes < 1024 ? `${bytes} bytes` : `${Math.round(bytes / 1024)} KiB`);

/** An <img> or <audio> for base64 media, with a text alternative. */
function media(mimeType, data, label) {
  const url = dataUrl(mimeType, data);
  if (!url) return undefined;
  const kind = mimeType.toLowerCase().startsWith('image/') ? 'image' : 'audio';
  const caption = `${label} (${mimeType}, ${sizeText(Math.floor((data.replace(/\s+/g, '').length * 3) / 4))})`;
  return h(
    'figure',
    { class: `media media-${kind}` },
    kind === 'image' ? h('img', { src: url, alt: caption }) : h('audio', { controls: true, src: url, 'aria-label': caption }),
    h('figcaption', {}, caption),
  );
}

/** Long base64 strings (media) shortened, so the JSON stays readable. */
function elided(value, depth = 0) {
  if (depth > 32) return '…';
  if (typeof value === 'string')
    return value.length > 2000 && BASE64.test(value.slice(0, 2000)) ? `…(${value.length} base64 characters)` : value;
  if (Array.isArray(value)) return value.map((v) => elided(v, depth + 1));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, elided(v, depth + 1)]));
  return value;
}

/** Base64 media anywhere in a JSON result ({mimeType, data} or {mime_type, base64} and the like). */
function findMedia(value, out = [], depth = 0) {
  if (out.length >= MAX_MEDIA || depth > 16 || !value || typeof value !== 'object') return out;
  if (!Array.isArray(value)) {
    const mime = value.mimeType ?? value.mime_type ?? value.contentType;
    const data = value.data ?? value.base64 ?? value.blob;
    if (dataUrl(mime, data)) out.push({ mimeType: mime, data });
  }
  for (const v of Array.isArray(value) ? value : Object.values(value)) findMedia(v, out, depth + 1);
  return out;
}

/** A <pre> of JSON (or of text that is JSON), else of the text. */
export function jsonBlock(value, label) {
  return h('pre', { class: 'json', tabindex: '0', 'aria-label': label }, typeof value === 'string' ? value : pretty(elided(value)));
}

function textBlock(text, label) {
  try {
    const parsed = JSON.parse(text);
    if (parsed && typeof parsed === 'object') return jsonBlock(parsed, label);
  } catch {
    // plain text
  }
  return h('pre', { class: 'text', tabindex: '0', 'aria-label': label }, text);
}

/** MCP content blocks (tool results, prompt messages): text, image, audio, embedded resources, links. */
export function renderBlocks(blocks, what) {
  return blocks.map((b, i) => {
    const label = `${what} ${i + 1}`;
    if (!b || typeof b !== 'object') return jsonBlock(b, label);
    if (b.type === 'text') return textBlock(String(b.text ?? ''), `${label}: text`);
    if (b.type === 'image' || b.type === 'audio') return media(b.mimeType, b.data, `${label}: ${b.type}`) || jsonBlock(b, label);
    if (b.type === 'resource' && b.resource) return renderContents([b.resource], `${label}: resource`);
    if (b.type === 'resource_link')
      return h('p', {}, `${label}: link to `, h('code', {}, String(b.uri ?? '')), b.name ? ` (${b.name})` : '');
    return jsonBlock(b, label);
  });
}

/** resources/read contents: text as text (or JSON), blobs of image and audio types as media. */
export function renderContents(contents, what) {
  return contents.map((c, i) => {
    const label = `${what} ${i + 1}${c.uri ? ` (${c.uri})` : ''}`;
    if (typeof c.text === 'string')
      return h(
        'div',
        { class: 'content' },
        h('p', { class: 'muted' }, label, c.mimeType ? ` · ${c.mimeType}` : ''),
        textBlock(c.text, label),
      );
    if (typeof c.blob === 'string')
      return (
        media(c.mimeType, c.blob, label) ||
        h('p', {}, `${label}: ${c.mimeType || 'binary'}, ${sizeText(Math.floor((c.blob.length * 3) / 4))}`)
      );
    return jsonBlock(c, label);
  });
}

/** A tool call's outcome: {status, body, requestId, traceId, roundTripMs}. */
export function renderCallResult(outcome) {
  const { status, body, requestId, traceId, roundTripMs } = outcome;
  const ok = body && body.success === true;
  const meta = [
    ['Outcome', ok ? 'ok' : `${body?.code ?? 'ERROR'} (HTTP ${status})`],
    ['Tool', body?.tool ?? '–'],
    ['Service', body?.service ?? '–'],
    ['Duration', body?.durationMs !== undefined ? `${body.durationMs} ms at the gateway, ${roundTripMs} ms here` : `${roundTripMs} ms`],
    ['Trace id', traceId ?? '–'],
    ['Request id', requestId ?? '–'],
  ];
  if (body?.session_id) meta.push(['Session', `${body.session_id}${body.context_id ? ` · context ${body.context_id}` : ''}`]);
  const content = [];
  const blocks = body?.mcp && Array.isArray(body.mcp.content) ? body.mcp.content : undefined;
  if (!ok) {
    content.push(h('p', { class: 'error-text' }, String(body?.error ?? 'The call failed.')));
    if (body?.details !== undefined) content.push(h('h4', {}, 'Details'), jsonBlock(body.details, 'Error details'));
  }
  if (blocks) {
    content.push(h('h4', {}, 'Content'), renderBlocks(blocks, 'Content block'));
  } else if (ok) {
    const found = findMedia(body.result).map((m, i) => media(m.mimeType, m.data, `Media ${i + 1} in the result`));
    if (found.length) content.push(h('h4', {}, 'Media'), found);
    content.push(
      h('h4', {}, 'Result'),
      typeof body.result === 'string' ? textBlock(body.result, 'Result') : jsonBlock(body.result, 'Result'),
    );
  }
  return h(
    'section',
    {
      class: `result ${ok ? 'ok' : 'failed'}`,
      'aria-labelledby': 'result-title',
      'data-outcome': ok ? 'ok' : String(body?.code ?? 'ERROR'),
    },
    h('h3', { id: 'result-title', tabindex: '-1' }, ok ? 'Result: ok' : `Result: ${body?.code ?? 'error'}`),
    h(
      'dl',
      { class: 'meta' },
      meta.map(([k, v]) => [h('dt', {}, k), h('dd', {}, h('code', {}, v))]),
    ),
    content,
  );
}
