"""A local model read offline: its weights from the files, its KV cache per layer from the config.

Layer rule (tests/test_import_graph.py): this package imports only `iteragpu.core`.

`config` reads `config.json` (with a nested `text_config`) into the attention layout of the
families it knows; `safetensors` reads headers (never tensor data), `gguf` reads GGUF tensor infos
with the `gguf` package (the `models` extra); `parameters` counts a decoder's parameters from its
config; `kv` sizes the cache per layer kind under Transformers' dynamic or static semantics;
`model` combines them (`size_model`) and writes the `--json` object (`payload`). Every malformed
input raises a `ModelInputError` whose message is one line.
"""
