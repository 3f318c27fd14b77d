"""``python -m fsbench.cli``: the command line, as the ``fsbench`` script."""

from fsbench.cli import main

main()
