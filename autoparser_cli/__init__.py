"""autoparser's command-line interface (thin: formatting and argument handling only)."""

__version__ = "0.1.0"
