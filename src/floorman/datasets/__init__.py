"""The table simulator: scene model in table millimetres, renderer through a camera model, datasets, scenarios."""
