"""pokerkit as the oracle for TDA minimum-raise legality on random no-limit betting sequences.

pokerkit is a dev-only test dependency (`pip install pokerkit`); without it the test is skipped. It plays
random hands; at each decision our `rule_bet` (tda2024) must give the same minimum raise-to as pokerkit, and
every bet, raise or all-in our ruling produces must be accepted by pokerkit.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import pytest

from floorman.rules.rulebook import load_rulebook
from floorman.rules.ruling_models import BetRuling, BetSituation
from floorman.rules.rulings import rule_bet

pokerkit = pytest.importorskip("pokerkit")

STREETS = ("preflop", "flop", "turn", "river")
AUTOMATIONS = (
    pokerkit.Automation.ANTE_POSTING, pokerkit.Automation.BET_COLLECTION,
    pokerkit.Automation.BLIND_OR_STRADDLE_POSTING, pokerkit.Automation.CARD_BURNING,
    pokerkit.Automation.HOLE_DEALING, pokerkit.Automation.BOARD_DEALING,
    pokerkit.Automation.HOLE_CARDS_SHOWING_OR_MUCKING, pokerkit.Automation.HAND_KILLING,
    pokerkit.Automation.CHIPS_PUSHING, pokerkit.Automation.CHIPS_PULLING,
)


@dataclass
class Round:
    """What our ruling needs to know about the betting round, carried from one ruling to the next."""

    street_index: int
    facing: int
    last_raise: int
    facing_all_in: bool


def _declaration(rng: random.Random, state: Any, facing: int) -> Any:
    actor = state.actor_index
    cap = state.stacks[actor] + state.bets[actor]
    choice = rng.random()
    if choice < 0.1 and facing > state.bets[actor]:
        return "fold"
    low = state.min_completion_betting_or_raising_to_amount
    if choice < 0.55 or low is None:
        return "call"
    if choice < 0.65 or low >= cap:
        return "all-in"
    target = rng.randint(max(low - 50, facing + 1), cap)  # sometimes under the minimum: it must be completed
    return {"raise_to": target} if facing > 0 else {"bet": target}


def _ruling(state: Any, round_: Round, declaration: Any, big_blind: int) -> BetRuling:
    actor = state.actor_index
    situation = BetSituation(
        rulebook="tda2024", blinds=(big_blind // 2, big_blind), street=STREETS[round_.street_index],
        facing_bet_to=round_.facing, actor_in_before=state.bets[actor], last_raise_size=round_.last_raise,
        trips=(), declaration=declaration, stack_before=state.stacks[actor], facing_all_in=round_.facing_all_in)
    return rule_bet(situation=situation, rulebook=load_rulebook("tda2024"))


def _play_hand(rng: random.Random) -> int:
    """Play one random hand; return the number of decisions checked."""
    players = rng.randint(2, 6)
    big_blind = rng.choice((100, 200, 400))
    stacks = tuple(rng.randint(1, 60) * big_blind // 4 + big_blind for _ in range(players))
    state = pokerkit.NoLimitTexasHoldem.create_state(AUTOMATIONS, True, 0, (big_blind // 2, big_blind), big_blind,
                                                     stacks, players)
    round_ = Round(street_index=0, facing=max(state.bets), last_raise=big_blind, facing_all_in=False)
    checked = 0
    while state.status and state.actor_index is not None:
        if state.street_index != round_.street_index:
            round_ = Round(street_index=state.street_index, facing=0, last_raise=big_blind, facing_all_in=False)
        declaration = _declaration(rng, state, round_.facing)
        if declaration == "fold":
            state.fold()
            continue
        ruling = _ruling(state, round_, declaration, big_blind)
        oracle = state.min_completion_betting_or_raising_to_amount
        actor = state.actor_index
        if oracle is not None and oracle < state.stacks[actor] + state.bets[actor]:
            assert ruling.min_raise_to == oracle, (ruling, state.bets, state.stacks)
            checked += 1
        raising = ruling.total_to > round_.facing
        if raising and oracle is not None:
            assert state.can_complete_bet_or_raise_to(ruling.total_to), (ruling, state.bets, state.stacks)
        if raising and state.can_complete_bet_or_raise_to(ruling.total_to):
            state.complete_bet_or_raise_to(ruling.total_to)
            round_ = Round(street_index=round_.street_index, facing=ruling.next_facing_bet_to,
                           last_raise=ruling.next_last_raise_size,
                           facing_all_in=not ruling.reopens_betting and round_.facing > 0)
        else:
            state.check_or_call()
    return checked


def test_tda_minimum_raise_matches_pokerkit_on_random_hands() -> None:
    rng = random.Random(20240)
    checked = sum(_play_hand(rng) for _ in range(150))
    assert checked > 300
