"""The errors of a model read: one line each, with a stable reason code.

They are `InputError`s (the core's bad-input error): the CLI reports them on one line with exit
code 2, and may translate `template` with the same `values`.
"""

from __future__ import annotations

from iteragpu.core.numbers import InputError


class ModelInputError(InputError):
    """A model path, file or config that cannot be read as a model."""


class HeaderError(ModelInputError):
    """A safetensors file whose header is missing, truncated or inconsistent."""


class UnknownDtypeError(ModelInputError):
    """A tensor stored in a dtype this reader does not know the size of."""


class MissingShardError(ModelInputError):
    """A sharded index names a shard that is not in the folder."""


class ConfigError(ModelInputError):
    """A config.json without what the attention layout needs (heads, layers, sizes)."""


class UnsupportedModelError(ModelInputError):
    """A model whose memory needs knowledge this package does not have (say which)."""


class GgufError(ModelInputError):
    """A GGUF file that cannot be read (wrong magic, truncated), or the `gguf` package missing."""


def system_error_code(error: OSError) -> str:
    """An OS error's code (`EACCES`, `EISDIR`): the system's own message is English, so a
    message in the reader's language names the code instead."""
    import errno

    return errno.errorcode.get(error.errno or 0, str(error.errno))
