"""The edge side of the event bus: broker, publisher with its SQLite spool and replay, gap-filling subscriber, keys.

The edge agent pipeline itself (capture -> detect -> track -> table state -> events) is not built yet.
"""
