"""Human renderings of layouts, shared by the command line and the language server's hover.

Pure functions from core objects to text: no argparse, no I/O, no terminal state.
"""
