"""floorman: watches a live poker table through overhead cameras and calls the floor when a rule is broken."""

__version__ = "0.1.0"
