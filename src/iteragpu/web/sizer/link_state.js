/*
 * The page's whole state in its address: a link reopens the same calculation.
 *
 * Pure functions, no DOM: the page hands in plain objects of strings (what its fields hold)
 * and gets back a search string, or the reverse. What travels:
 *   - the main form's query (every key of the page's defaults, as before: old links still open);
 *   - the model: a published model by its name (`model=llama-3.1-8b`), or a pasted config.json
 *     compressed into the address (`config=`, raw DEFLATE then base64url) when it fits in
 *     LINK_CONFIG_MAX_CHARS characters, which keeps a link short enough for any server and
 *     chat client; a longer config is left out and the page says so;
 *   - the other sections' settings under their own prefixes (`train_`, `fit_`, `config_` for
 *     how a config is read, e.g. `config_layout`) and the split's `tp`, `pp`, `ep`, each
 *     written only where it differs from the field's default.
 *
 * Nothing here is sent anywhere: the config leaves the page only in the link the reader copies.
 */

/** The most characters of an encoded config written into a link (about 4 KB of JSON). */
export const LINK_CONFIG_MAX_CHARS = 6000;

/** The most characters a decoded config may hold (the page's CONFIG_MAX_CHARS, 1 MiB). */
export const DECODED_CONFIG_MAX_CHARS = 1 << 20;

/** The sections whose fields travel under a prefix, each written only when not its default. */
export const SECTION_PREFIXES = { train: "train_", split: "", fit: "fit_", config: "config_" };

/** The `config` parameter of an encoded config, or null where it is too long for a link. */
export function linkConfigToken(token) {
  return typeof token === "string" && token.length > 0 && token.length <= LINK_CONFIG_MAX_CHARS
    ? token
    : null;
}

function toBase64Url(bytes) {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64Url(text) {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  const padded = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
  let binary;
  try {
    binary = atob(padded);
  } catch (error) {
    return null;
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

async function collect(stream, limit) {
  const reader = stream.getReader();
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    // A small link must not inflate into an unbounded text (a decompression bomb).
    if (size > limit) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  chunks.forEach((chunk) => {
    out.set(chunk, at);
    at += chunk.length;
  });
  return out;
}

/** A config's text as the `config` parameter: raw DEFLATE, base64url. */
export async function encodeConfig(text) {
  const input = new Blob([new TextEncoder().encode(String(text))]).stream();
  const packed = await collect(input.pipeThrough(new CompressionStream("deflate-raw")), Infinity);
  return toBase64Url(packed);
}

/**
 * The text of a `config` parameter, or null when it is not one this page wrote (bad base64,
 * bad DEFLATE, not UTF-8, or longer than the page reads).
 */
export async function decodeConfig(token) {
  const bytes = fromBase64Url(String(token));
  if (bytes === null || bytes.length === 0) return null;
  try {
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
    // UTF-8 takes at most 4 bytes a character: the byte limit bounds the characters.
    const out = await collect(stream, DECODED_CONFIG_MAX_CHARS * 4);
    if (out === null) return null;
    const text = new TextDecoder("utf-8", { fatal: true }).decode(out);
    return text.length > DECODED_CONFIG_MAX_CHARS ? null : text;
  } catch (error) {
    return null;
  }
}

/**
 * The search string of a state: {query, defaults, model, config, sections}, where `query`
 * holds every key of `defaults`; `model` a published model's name or null; `config` a pasted
 * config's encoded token or null (never both); `sections` maps a section name of
 * SECTION_PREFIXES to {values, defaults}.
 */
export function searchFromState(state) {
  const params = new URLSearchParams();
  Object.keys(state.defaults).forEach((key) => {
    params.set(key, state.query[key]);
  });
  if (state.model) params.set("model", state.model);
  else if (state.config) params.set("config", state.config);
  const sections = state.sections || {};
  Object.keys(SECTION_PREFIXES).forEach((name) => {
    const section = sections[name];
    if (!section) return;
    Object.keys(section.defaults).forEach((key) => {
      const value = section.values[key];
      if (value !== undefined && value !== null && value !== section.defaults[key]) {
        params.set(SECTION_PREFIXES[name] + key, value);
      }
    });
  });
  return "?" + params.toString();
}

/**
 * The state a search string holds, over the defaults given: {query, model, config, sections},
 * with a section's missing keys at their defaults and unknown keys ignored.
 */
export function stateFromSearch(search, defaults, sectionDefaults) {
  const params = new URLSearchParams(search);
  const query = {};
  Object.keys(defaults).forEach((key) => {
    query[key] = params.has(key) ? params.get(key) : defaults[key];
  });
  const sections = {};
  Object.keys(SECTION_PREFIXES).forEach((name) => {
    const own = (sectionDefaults || {})[name];
    if (!own) return;
    const values = {};
    Object.keys(own).forEach((key) => {
      const param = SECTION_PREFIXES[name] + key;
      values[key] = params.has(param) ? params.get(param) : own[key];
    });
    sections[name] = values;
  });
  const model = params.get("model");
  const config = model ? null : params.get("config");
  return { query: query, model: model || null, config: config || null, sections: sections };
}
