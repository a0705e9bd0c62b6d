"""``python -m autoparser_cli``: the ``autoparser`` command."""

from autoparser_cli.launch import main

main()
