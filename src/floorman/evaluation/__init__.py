"""Recorded-video evaluation harness: a rendered scenario's video through the edge's vision and event derivation,
scored against its truth (`python -m floorman.evaluation`, `derivation`, `report`), with the vision's table states kept
per video (`states`) so that a change in derivation is re-scored without running the vision again."""
