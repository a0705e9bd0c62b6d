"""A small PEG engine: combinators, partial-input parsing, tagged trees, GBNF.

``peg`` knows nothing of chat templates; ``analysis`` builds parsers with it.
"""
