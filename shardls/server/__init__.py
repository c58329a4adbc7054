"""The language server (`shardls serve`): hovers, diagnostics, inlay hints, completion, quick
fixes and navigation for the layouts the analysis finds, over the Language Server Protocol.

Importing this package imports neither jax, flax nor numpy: the server reads code, it never
runs it, and an editor should not wait seconds for it to start.
"""
