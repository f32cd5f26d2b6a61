"""FastAPI dashboard and overlay (a later issue). Not built yet."""
