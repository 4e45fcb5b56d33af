"""The `iteragpu` command line: `app` (the commands), `options` (what they share), `views`
(localised tables), `payloads` (the `--json` objects) and `table` (terminal tables). Kept empty,
so that importing a view does not import typer."""
