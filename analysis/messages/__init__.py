"""Messages, and how parse trees become messages and stream deltas (capture tags, format hooks, the mapper).

The names below are this layer's public API; each is imported on first use
(``analysis.messages.NAME``), so importing one of its modules stays cheap."""

from __future__ import annotations

from typing import TYPE_CHECKING

from analysis._lazy import lazy_getattr

if TYPE_CHECKING:
    from analysis.messages.deviations import Deviation, DeviationKind
    from analysis.messages.hooks import OutputHooks, Route
    from analysis.messages.mapper import (
        Delta,
        Message,
        ToolCall,
        accumulate,
        generated_call_id,
        map_result,
        message_deltas,
    )

_EXPORTS = {
    "Message": "mapper",
    "ToolCall": "mapper",
    "Delta": "mapper",
    "map_result": "mapper",
    "accumulate": "mapper",
    "message_deltas": "mapper",
    "OutputHooks": "hooks",
    "Route": "hooks",
    "generated_call_id": "mapper",
    "Deviation": "deviations",
    "DeviationKind": "deviations",
}
__all__ = [
    "Delta",
    "Deviation",
    "DeviationKind",
    "Message",
    "OutputHooks",
    "Route",
    "ToolCall",
    "accumulate",
    "generated_call_id",
    "map_result",
    "message_deltas",
]
__getattr__ = lazy_getattr(__name__, _EXPORTS)
