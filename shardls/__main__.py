"""`python -m shardls`: the same entry point as the `shardls` console script."""

from shardls.cli.main import main

raise SystemExit(main())
