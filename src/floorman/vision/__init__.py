"""Perception: the ONNX Runtime detector (`detector`), the card and chip recognisers (`cards*`, `chips*`),
calibration, tracking in table mm, several cameras fused (`fusion`), the per-frame `TableState` (`table_state`), and
`floorman detect`, `floorman calibrate`, `floorman chips calibrate`, `floorman photos score|draft`. No torch or
ultralytics here."""
