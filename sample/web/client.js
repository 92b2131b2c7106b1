// pigeonpost browser client: parseHeaders and fetchWithRetry, same rules as the Python side.

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const RETRYABLE_STATUS = new Set([429, 502, 503, 504]);

export class MalformedHeader extends Error {
  constructor(lineNo, reason) {
    super(`line ${lineNo}: ${reason}`);
    this.lineNo = lineNo;
  }
}

// Parse a raw header block into a Map-like object with case-insensitive get/getAll.
export function parseHeaders(text) {
  const end = text.indexOf('\r\n\r\n');
  const block = end < 0 ? text : text.slice(0, end);
  const items = [];
  block.split('\r\n').forEach((line, i) => {
    if (!line) return;
    if (line[0] === ' ' || line[0] === '\t') throw new MalformedHeader(i + 1, 'obsolete line folding');
    const colon = line.indexOf(':');
    if (colon < 0) throw new MalformedHeader(i + 1, 'missing colon');
    const name = line.slice(0, colon);
    if (!TOKEN.test(name)) throw new MalformedHeader(i + 1, `invalid header name ${JSON.stringify(name)}`);
    items.push([name.toLowerCase(), line.slice(colon + 1).trim()]);
  });
  return {
    getAll: (name) => items.filter(([k]) => k === name.toLowerCase()).map(([, v]) => v),
    get(name) {
      const values = this.getAll(name);
      if (!values.length) return null;
      return name.toLowerCase() === 'set-cookie' ? values[0] : values.join(', ');
    },
    size: items.length,
  };
}

// Delay in milliseconds before the next attempt: full jitter, capped by maxDelay.
export function backoffDelay(attempt, { baseDelay = 250, maxDelay = 8000 } = {}) {
  const ceiling = Math.min(maxDelay, baseDelay * 2 ** (attempt - 1));
  return Math.random() * ceiling;
}

// fetch() with retries on network errors and retryable status codes.
export async function fetchWithRetry(url, options = {}, { maxAttempts = 3, ...delays } = {}) {
  for (let attempt = 1; ; attempt += 1) {
    let response;
    try {
      response = await fetch(url, options);
    } catch (err) {
      if (attempt >= maxAttempts) throw err;   // CORS failures land here too
      await sleep(backoffDelay(attempt, delays));
      continue;
    }
    if (!RETRYABLE_STATUS.has(response.status) || attempt >= maxAttempts) return response;
    const hinted = Number(response.headers.get('retry-after'));
    const wait = Number.isFinite(hinted) && hinted > 0 ? hinted * 1000 : backoffDelay(attempt, delays);
    await sleep(Math.min(wait, delays.maxDelay ?? 8000));
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
