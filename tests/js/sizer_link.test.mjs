// The sizer's address: a link holds the whole calculation, and only what the page wrote opens.
//
//   node --test tests/js/sizer_link.test.mjs

import assert from "node:assert/strict";
import { deflateRawSync } from "node:zlib";
import { test } from "node:test";

import {
  DECODED_CONFIG_MAX_CHARS,
  decodeConfig,
  encodeConfig,
  LINK_CONFIG_MAX_CHARS,
  linkConfigToken,
  searchFromState,
  stateFromSearch,
} from "../../src/iteragpu/web/sizer/link_state.js";

const DEFAULTS = { params: "7e9", bits: "16", tokens: "8192", task: "inference" };
const SECTIONS = {
  train: { method: "full", micro_batch: "1", sequence_length: "2048" },
  split: { tp: "1", pp: "1", ep: "" },
  fit: { card: "", solve: "tokens", utilization: "" },
  config: { layout: "mla_latent" },
};

test("a pasted config survives the trip through the address, byte for byte", async () => {
  const texts = [
    "{}",
    JSON.stringify({ model_type: "llama", num_hidden_layers: 32, layer_types: Array(48).fill("full_attention") }),
    '{"name": "모델 이름", "note": "kepala KV \\u00e9", "emoji": "\u{1F600}"}',
  ];
  for (const text of texts) {
    const token = await encodeConfig(text);
    assert.match(token, /^[A-Za-z0-9_-]+$/, "base64url only: no character the address must escape");
    assert.equal(await decodeConfig(token), text);
  }
});

test("the encoding is node's own raw DEFLATE: another implementation reads it", async () => {
  const text = JSON.stringify({ model_type: "qwen3", hidden_size: 4096, rope_theta: 1000000 });
  const token = await encodeConfig(text);
  const b64 = token.replace(/-/g, "+").replace(/_/g, "/");
  const { inflateRawSync } = await import("node:zlib");
  assert.equal(inflateRawSync(Buffer.from(b64, "base64")).toString("utf-8"), text);
  // And a token written by zlib opens in the page.
  const zlibToken = deflateRawSync(Buffer.from(text)).toString("base64url");
  assert.equal(await decodeConfig(zlibToken), text);
});

test("a token the page did not write is refused, never half-read", async () => {
  for (const bad of ["", "not base64!", "%%%", "AAAA", Buffer.from("plain text").toString("base64url")]) {
    assert.equal(await decodeConfig(bad), null, bad);
  }
  // Not UTF-8 after inflating.
  assert.equal(await decodeConfig(deflateRawSync(Buffer.from([0xff, 0xfe, 0x00])).toString("base64url")), null);
});

test("a small link cannot inflate past what the page reads (a decompression bomb)", async () => {
  const bomb = deflateRawSync(Buffer.alloc(DECODED_CONFIG_MAX_CHARS * 4 + 1, 0x20)).toString("base64url");
  assert.ok(bomb.length < 10000, "the bomb's link is short");
  assert.equal(await decodeConfig(bomb), null);
  const justRight = deflateRawSync(Buffer.alloc(1000, 0x20)).toString("base64url");
  assert.equal((await decodeConfig(justRight)).length, 1000);
});

test("the state goes into the address and comes back whole", () => {
  const state = {
    query: { params: "8e9", bits: "4", tokens: "16384", task: "adaptation" },
    defaults: DEFAULTS,
    model: "qwen3-8b",
    config: null,
    sections: {
      train: { values: { method: "qlora", micro_batch: "4", sequence_length: "4096" }, defaults: SECTIONS.train },
      split: { values: { tp: "2", pp: "1", ep: "on" }, defaults: SECTIONS.split },
      fit: { values: { card: "rtx-4090", solve: "sequences", utilization: "0.9" }, defaults: SECTIONS.fit },
    },
  };
  const search = searchFromState(state);
  const back = stateFromSearch(search, DEFAULTS, SECTIONS);
  assert.deepEqual(back.query, state.query);
  assert.equal(back.model, "qwen3-8b");
  assert.equal(back.config, null);
  assert.deepEqual(back.sections.train, state.sections.train.values);
  assert.deepEqual(back.sections.split, state.sections.split.values);
  assert.deepEqual(back.sections.fit, state.sections.fit.values);
  // Defaults are not written: a link holds what the reader changed.
  assert.doesNotMatch(searchFromState({ ...state, sections: { split: { values: SECTIONS.split, defaults: SECTIONS.split } } }), /tp=/);
});

test("a named model wins over a config; an old link (query alone) opens at the defaults", () => {
  const search = searchFromState({
    query: DEFAULTS, defaults: DEFAULTS, model: "llama-3.1-8b", config: "abc", sections: {},
  });
  assert.match(search, /model=llama-3\.1-8b/);
  assert.doesNotMatch(search, /config=/);
  const old = stateFromSearch("?params=70e9&bits=8&tp=4&unknown=1", DEFAULTS, SECTIONS);
  assert.equal(old.query.params, "70e9");
  assert.equal(old.query.tokens, "8192");
  assert.equal(old.sections.split.tp, "4");
  assert.equal(old.sections.train.method, "full");
  assert.equal(old.model, null);
  assert.equal(old.config, null);
});

test("how a config is read travels too (config_layout), apart from the config itself", () => {
  const search = searchFromState({
    query: DEFAULTS, defaults: DEFAULTS, model: null, config: "abc",
    sections: { config: { values: { layout: "mla_per_head" }, defaults: SECTIONS.config } },
  });
  assert.match(search, /config_layout=mla_per_head/);
  const back = stateFromSearch(search, DEFAULTS, SECTIONS);
  assert.equal(back.config, "abc");
  assert.equal(back.sections.config.layout, "mla_per_head");
  assert.equal(stateFromSearch("?config_layout=mla_per_head", DEFAULTS, SECTIONS).config, null);
});

test("a config's token goes into a link only up to LINK_CONFIG_MAX_CHARS", async () => {
  assert.equal(linkConfigToken("a".repeat(LINK_CONFIG_MAX_CHARS)), "a".repeat(LINK_CONFIG_MAX_CHARS));
  assert.equal(linkConfigToken("a".repeat(LINK_CONFIG_MAX_CHARS + 1)), null);
  assert.equal(linkConfigToken(""), null);
  assert.equal(linkConfigToken(null), null);
  // A published-size config fits; random text of a few tens of kilobytes does not.
  const small = await encodeConfig(JSON.stringify({ model_type: "llama", num_hidden_layers: 32 }));
  assert.equal(linkConfigToken(small), small);
  let noise = "";
  for (let i = 0; noise.length < 40000; i += 1) noise += Math.imul(i, 2654435761).toString(36);
  assert.equal(linkConfigToken(await encodeConfig(noise)), null);
});
