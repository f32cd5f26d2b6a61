"""Training recipe, export and the model registry (the perception issue). Not built yet."""
