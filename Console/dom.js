// DOM building for every view: elements get text through textContent only, so a value
// from the outside world (a payload, a header, an order number) is never parsed as markup.

const SVG_NS = 'http://www.w3.org/2000/svg';

/** An HTML element: `attrs` sets attributes (`class`, `data-*`, `aria-*`...) and `on*` listeners;
 *  children are nodes or strings (strings become text nodes). */
export function h(tag, attrs = {}, ...children) {
  return fill(document.createElement(tag), attrs, children);
}

/** The same for SVG elements (createElementNS). */
export function s(tag, attrs = {}, ...children) {
  return fill(document.createElementNS(SVG_NS, tag), attrs, children);
}

function fill(el, attrs, children) {
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Empties `el` and fills it with `children`. */
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}
