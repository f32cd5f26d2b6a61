"""Recorded-video evaluation harness (a later issue). Not built yet."""
