"""The values the hand state machine gives out: streets, completed actions, a frozen view of the table, the push
in progress. Kept apart from `HandState` (floorman.rules.state) so that the checks can name them."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Literal

from floorman.core.chips import ChipCount
from floorman.rules.ruling_models import BetRuling

ActionKind = Literal["post_small_blind", "post_big_blind", "check", "call", "bet", "raise", "all_in", "fold",
                     "player_choice"]


class Street(enum.StrEnum):
    WAITING = "waiting"
    """No hand running (before the first shuffle or hole card)."""
    PREFLOP = "preflop"
    FLOP = "flop"
    TURN = "turn"
    RIVER = "river"


STREET_BY_BOARD = {0: Street.PREFLOP, 1: Street.FLOP, 2: Street.FLOP, 3: Street.FLOP, 4: Street.TURN,
                    5: Street.RIVER}


@dataclass(frozen=True)
class HandAction:
    """One completed action, appended to the hand log."""

    hand: int
    street: Street
    seat: int
    kind: ActionKind
    total_to: int
    trips: int
    seq: int
    t: float
    out_of_turn: bool
    ruling: BetRuling | None = None
    facing_to: int = 0
    """The bet the seat faced before acting."""
    could_raise: bool = True
    """Whether the seat still had the right to raise (CATALOG A4) before acting."""
    frame: int = 0
    """Frame of the event that started the action."""
    chips: int = 0
    """Number of chips pushed (0 for an action without chips)."""
    confidence: float = 1.0
    """How sure the hand's chip record was when the action completed (HandState.chip_doubt)."""
    skipped: int | None = None
    """The seat this first action of the seat on its street surely skipped, whatever the amounts: one before it
    in the street's order that had shown no action yet (HandState.owed_whatever_amounts). None when there was
    none, or when only the amounts say whose turn it was."""


@dataclass(frozen=True)
class SeatView:
    seat: int
    stack: int | None
    in_hand: bool
    folded: bool
    all_in: bool
    street_in: int
    hand_in: int
    may_raise: bool


@dataclass(frozen=True)
class HandSnapshot:
    """A frozen view of the table."""

    hand: int
    street: Street
    button: int | None
    blinds: tuple[int, int]
    board: tuple[str, ...]
    seats: tuple[SeatView, ...]
    actor: int | None
    facing_bet_to: int
    last_full_raise: int
    pot: int


@dataclass(frozen=True)
class PendingPush:
    """The push in progress: the trips of one seat so far, and what he declared before it."""

    seat: int
    trips: tuple[tuple[ChipCount, ...], ...]
    value: int
    in_before: int
    facing_to: int
    declared: bool
    out_of_turn: bool
    seq: int
    t: float
    frame: int
    confidence: float = 1.0
    """How sure the hand's chip record is (HandState.chip_doubt)."""
