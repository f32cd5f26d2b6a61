"""The edge: one camera of one table, from frames to the event bus.

- `agent`, `pipeline`, `sources`, `gate`, `builders`: `floorman edge` (capture -> detect where the picture changed ->
  table state -> events -> publish), from a video file, a stream, a USB camera or a folder of images;
- `derive*`: the semantic events of docs/events.md from a sequence of `TableState`s;
- `broker`, `publisher`, `spool`, `subscriber`, `keys`, `bus`: the ZeroMQ event bus (SQLite spool and replay,
  gap-filling subscriber, CURVE keys); `evidence`: the JPEG ring buffer an alert's frames are fetched from.
"""
