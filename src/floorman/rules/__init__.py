"""Rulebooks, hand state machine, checks, bet rulings, sanctions, and the checker service.

- `rulebook`: the rulebook schema and `load_rulebook` (shipped YAML in `rulebooks/`: tda2024, ggc, club_000,
  club_004, or any path); `params`: the typed CATALOG section 4 parameters with their citations.
- `rulings` / `ruling_models`: `rule_bet`, the pure bet ruling behind `floorman ruling`.
- `sanctions`: the per-tournament `SanctionRegister` that suggests (never applies) the next sanction.
- `state`: `HandState`, the per-table hand state machine driven by core events (`hand_model`: the values it
  gives out); `pots`: blind positions (dead button) and side pots.
- `checker`: `TableChecker` / `RulesChecker`, events in, `Alert`s out (citations, severity, suggested sanction,
  duplicates merged, hand windows for CATALOG F7); the checks themselves live in `checks_betting` (A1, A2, A3,
  A4, A8, A11, B1, C1, C2), `checks_chips` (D1, D2, D3), `checks_cards` (E2, E3, E4, E7, F2, F6) and
  `checks_award` (F4); `findings` holds what a check returns and the sensing settings.
- `service`: the checker as a service without the transport (the tournament's sanction register, alert
  messages); `floorman.serve` puts it on the bus (`floorman rules --subscribe ... --publish ...`);
  `truth_check` / `truth_io`: `floorman rules check-truth`, a scenario's truth replayed and scored (precision,
  recall) on each alert's `raised_at`.
"""
