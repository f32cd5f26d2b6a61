"""Rulebooks, hand state machine, checks, bet rulings, sanctions.

- `rulebook`: the rulebook schema and `load_rulebook` (shipped YAML in `rulebooks/`: tda2024, ggc, club_000,
  club_004, or any path); `params`: the typed CATALOG section 4 parameters with their citations.
- `rulings` / `ruling_models`: `rule_bet`, the pure bet ruling behind `floorman ruling`.
- `sanctions`: the per-tournament `SanctionRegister` that suggests (never applies) the next sanction.
- `state`: `HandState`, the per-table hand state machine driven by core events.
"""
