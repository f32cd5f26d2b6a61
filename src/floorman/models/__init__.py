"""Training and export (the optional `train` extra: torch, ultralytics): the detector's recipe (`train`, `crops`,
`export`, `recover`, `average`), the card classifier and index reader (`cards_data`, `cards_train`), the chip offset net
(`chips_data`, `chips_train`), and the registry of the shipped weights (`registry`, runtime-safe)."""
