"""Rulebooks, hand state machine, checks, bet rulings, sanctions."""
