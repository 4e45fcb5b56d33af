"""The ground floor: exact byte arithmetic that imports nothing else of the package.

`units` (what a GB and a GiB hold), `numbers` (the one input grammar, exact rounding and
decimal text), `quantity` (byte quantities such as `24e9 B`), `weights`, `kv_cache`, `peaks` and
`allocator` (what PyTorch's caching allocator shows for the lab's network).
"""
