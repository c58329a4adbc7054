"""The walker's parts, one module per concern; `analysis/walker.py` walks a module's statements
with them, and is where the rest of shardls imports the walker's names from."""
