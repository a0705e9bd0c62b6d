"""Chat-template analysis and parser generation.

Loading and sandboxed rendering (``loading``, ``rendering``, ``sandbox``,
``caps``), differential analysis (``probes``, ``diff``, ``markers`` and the
``*_phase`` modules, run by ``analyzer``), dedicated handlers (``handlers``),
parser generation (``parser_builder``, ``generation``), message mapping and
streaming (``mapper``, ``streaming``, ``pyliteral``) and checks (``conformance``,
``round_trip``, ``checking``).
Builds on ``peg``; never prints.
"""
