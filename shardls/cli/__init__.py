"""The `shardls` command line: one module per subcommand, wired together by `shardls.cli.main`."""
