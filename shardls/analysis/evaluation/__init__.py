"""The evaluator's parts, one module per concern; `analysis/evaluator.py` composes them into
`Evaluator`, and is where the rest of shardls imports the evaluator's names from."""
