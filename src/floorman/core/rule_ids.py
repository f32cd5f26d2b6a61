"""Rule ids: one per topic of rules/CATALOG.md (section 1), valued by the catalog's id."""

from __future__ import annotations

import enum


class RuleId(enum.StrEnum):
    """The catalog topics. The value is the catalog id ("A8"); the name says what it is."""

    MIN_OPENING_BET = "A1"
    ALLIN_BELOW_BIG_BLIND = "A2"
    MIN_RAISE = "A3"
    SHORT_ALLIN_RERAISE = "A4"
    UNDER_RAISE = "A5"
    MULTIPLE_CHIP_BET = "A6"
    SINGLE_OVERSIZED_CHIP = "A7"
    STRING_BET = "A8"
    CORRECTION_WINDOW = "A9"
    POT_LIMIT_MISCOUNT = "A10"
    UNDER_CALL = "A11"
    VERBAL_DECLARATION = "A12"
    SPLASHING_POT = "B1"
    OUT_OF_TURN = "C1"
    SKIPPED_PLAYER = "C2"
    TABLE_TAP = "C3"
    FOLD_PROCEDURE = "C4"
    CLOCK = "C5"
    PHONE = "C6"
    HIDDEN_CHIPS = "D1"
    CHIPS_FROM_OUTSIDE = "D2"
    CHIPS_LEAVING_TABLE = "D3"
    SHUFFLE_AND_CUT = "E1"
    PREMATURE_BOARD_CARD = "E2"
    CARD_EXPOSED_DURING_DEAL = "E3"
    BURN_CARD_ERROR = "E4"
    DEALING_ORDER = "E5"
    ABSENT_PLAYER = "E6"
    HOLE_CARDS_VISIBLE = "E7"
    CARDS_EXPOSED_IN_HAND = "E8"
    HAND_PICKED_UP = "E9"
    SHOWDOWN_ORDER = "F1"
    ALLIN_SHOWDOWN_REVEAL = "F2"
    CARDS_SPEAK = "F3"
    ODD_CHIP = "F4"
    SIMULTANEOUS_ELIMINATIONS = "F5"
    RABBIT_HUNTING = "F6"
    RETROACTIVITY = "F7"
    BLINDS_AND_BUTTON = "G1"
    SEATING = "G2"
    HAND_FOR_HAND = "G3"
    SPECTATORS = "G4"
    CHIP_RACE = "H1"

    @property
    def slug(self) -> str:
        """Lower-case name, e.g. ``string_bet``."""
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> RuleId:
        """Accept the catalog id ("A8") or the name ("string_bet", "STRING_BET")."""
        key = text.strip()
        for rule in cls:
            if key.upper() == rule.value or key.upper() == rule.name:
                return rule
        raise ValueError(f"unknown rule id {text!r}: expected a catalog id such as 'A8' or a name such as "
                         "'string_bet'")


USER_NAMED_RULES: tuple[RuleId, ...] = (
    RuleId.STRING_BET,
    RuleId.CHIPS_FROM_OUTSIDE,
    RuleId.HIDDEN_CHIPS,
    RuleId.RABBIT_HUNTING,
)
"""The four checks the users named first (CATALOG section 1, last column)."""
