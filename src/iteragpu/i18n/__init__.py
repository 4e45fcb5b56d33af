"""Everything that depends on the reader's language: the list of languages, numbers, messages."""
