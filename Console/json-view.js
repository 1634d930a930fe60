// A safe JSON viewer: the document pretty-printed into a <pre> as text nodes and spans,
// never as markup. Masked e-mail addresses are marked, so support sees where masking applied.
import { h } from './dom.js';
import { isMasked } from './format.js';
import { ExactNumber } from './exact-json.js';

export function jsonView(value, attrs = {}) {
  const pre = h('pre', { class: 'json', ...attrs });
  write(pre, value, 0);
  return pre;
}

function write(out, value, depth) {
  const pad = '  '.repeat(depth + 1);
  const end = '  '.repeat(depth);
  if (value instanceof ExactNumber) {
    out.append(h('span', { class: 'json-literal' }, value.literal));
  } else if (Array.isArray(value)) {
    if (value.length === 0) return out.append('[]');
    out.append('[\n');
    value.forEach((item, i) => {
      out.append(pad);
      write(out, item, depth + 1);
      out.append(i < value.length - 1 ? ',\n' : '\n');
    });
    out.append(end + ']');
  } else if (value && typeof value === 'object') {
    const keys = Object.keys(value);
    if (keys.length === 0) return out.append('{}');
    out.append('{\n');
    keys.forEach((key, i) => {
      out.append(pad);
      out.append(stringSpan(key, 'json-key'));
      out.append(': ');
      write(out, value[key], depth + 1);
      out.append(i < keys.length - 1 ? ',\n' : '\n');
    });
    out.append(end + '}');
  } else if (typeof value === 'string') {
    out.append(stringSpan(value, 'json-string'));
  } else {
    out.append(h('span', { class: value === null ? 'json-null' : 'json-literal' }, String(value)));
  }
}

function stringSpan(text, cls) {
  if (isMasked(text)) return h('mark', { class: `${cls} masked`, title: 'e-mail address masked for support tokens' }, JSON.stringify(text));
  return h('span', { class: cls }, JSON.stringify(text));
}

/** Bytes (from base64) as UTF-8 text when they are, else null. */
export function bytesFromBase64(b64) {
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes;
}

export function utf8OrNull(bytes) {
  try { return new TextDecoder('utf-8', { fatal: true }).decode(bytes); } catch { return null; }
}

/** A hex dump: offset, 16 bytes, and their printable ASCII. */
export function hexDump(bytes) {
  const lines = [];
  for (let i = 0; i < bytes.length; i += 16) {
    const row = Array.from(bytes.slice(i, i + 16));
    const hex = row.map((b) => b.toString(16).padStart(2, '0')).join(' ').padEnd(47, ' ');
    const ascii = row.map((b) => (b >= 32 && b < 127 ? String.fromCharCode(b) : '.')).join('');
    lines.push(`${i.toString(16).padStart(8, '0')}  ${hex}  ${ascii}`);
  }
  return lines.join('\n');
}

/** A body shown as text (when it is UTF-8) or hex, with a switch between the two. */
export function bodyView(b64, idPrefix) {
  const bytes = bytesFromBase64(b64);
  const asText = utf8OrNull(bytes);
  const pre = h('pre', { class: 'body', id: `${idPrefix}-body` });
  let showing = asText !== null ? 'text' : 'hex';
  const toggle = h('button', { type: 'button', class: 'small' });
  const draw = () => {
    pre.textContent = showing === 'text' ? asText : hexDump(bytes);
    pre.dataset.view = showing;
    toggle.textContent = showing === 'text' ? 'Show as hex' : 'Show as text';
    toggle.disabled = asText === null;
  };
  toggle.addEventListener('click', () => { showing = showing === 'text' ? 'hex' : 'text'; draw(); });
  draw();
  return h('div', { class: 'body-view' },
    h('p', { class: 'help' }, `${bytes.length} bytes${asText === null ? ', not UTF-8 text: shown as hex' : ''}. `, toggle), pre);
}
