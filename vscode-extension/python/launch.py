"""Starts the shardls bundled with the VS Code extension, in whichever Python 3.10+ runs this file.

The bundled libraries (shardls, pygls, lsprotocol and their pure-Python dependencies, in
../bundled/libs) go first on sys.path, so the server is the same whatever the interpreter has
installed. Arguments are those of the `shardls` command, e.g. `serve --log-level info`.
"""

import os
import sys

LIBS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bundled", "libs")

if __name__ == "__main__":
    sys.path.insert(0, LIBS)
    from shardls.cli.main import main

    sys.exit(main(sys.argv[1:]))
