"""Detector (ONNX Runtime), recognisers, calibration, tracking, table state (the perception issue). Not built yet."""
