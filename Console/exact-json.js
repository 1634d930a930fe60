// JSON read without changing its numbers. The API sends a provider's numbers as the
// provider wrote them (`100.10`, `0.0000001`, `12345678901234567890`); JavaScript's
// numbers would show them as `100.1`, `1e-7` and `12345678901234567000`. A number whose
// literal a JavaScript number does not print back is kept as an ExactNumber, shown and
// saved as written; every other number (positions, counts, statuses) stays a number.

export class ExactNumber {
  constructor(literal) { this.literal = literal; }
  toString() { return this.literal; }
  valueOf() { return Number(this.literal); }
  // JSON.stringify writes the literal itself where the browser can (JSON.rawJSON).
  toJSON() { return typeof JSON.rawJSON === 'function' ? JSON.rawJSON(this.literal) : Number(this.literal); }
}

/** JSON.parse, numbers kept as written (the reviver's source text; without it, as JSON.parse reads them). */
export function parseExact(text) {
  return JSON.parse(text, (key, value, context) =>
    typeof value === 'number' && context && typeof context.source === 'string' && String(value) !== context.source
      ? new ExactNumber(context.source) : value);
}
