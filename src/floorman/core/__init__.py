"""The shared vocabulary of floorman: cards, chips, table geometry, events, alerts and rule ids.

`core` imports nothing else of ours. Besides parsing its own YAML configuration files it does no I/O.
"""

from floorman.core.cards import Card, Rank, Suit, full_deck
from floorman.core.errors import CameraError, ConfigError, FloormanError, SchemaError

__all__ = [
    "CameraError",
    "Card",
    "ConfigError",
    "FloormanError",
    "Rank",
    "SchemaError",
    "Suit",
    "full_deck",
]
