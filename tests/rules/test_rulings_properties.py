"""Properties every ruling keeps, on random situations, for the four rulebooks (hypothesis)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from floorman.core.chips import ChipCount
from floorman.rules.rulebook import SHIPPED_RULEBOOKS, load_rulebook
from floorman.rules.ruling_models import BetRuling, BetSituation
from floorman.rules.rulings import rule_bet

DENOMS = (5, 25, 100, 500, 1000)


@st.composite
def situations(draw: st.DrawFn) -> BetSituation:
    big = draw(st.sampled_from((100, 200, 400)))
    street = draw(st.sampled_from(("preflop", "flop", "turn", "river")))
    facing = draw(st.integers(min_value=big if street == "preflop" else 0, max_value=8 * big))
    last = draw(st.integers(min_value=big, max_value=max(big, facing))) if facing >= big else big
    in_before = draw(st.integers(min_value=0, max_value=facing))
    trips = draw(st.lists(st.lists(st.builds(ChipCount, denom=st.sampled_from(DENOMS),
                                             count=st.integers(1, 6)), min_size=1, max_size=3),
                          min_size=0 if facing == in_before else 1, max_size=3))
    pushed = sum(c.denom * c.count for trip in trips for c in trip)
    stack = draw(st.one_of(st.none(), st.integers(min_value=pushed, max_value=pushed + 5000)))
    declaration: Any = draw(st.sampled_from((None, None, None, "call", "raise", "all-in")))
    return BetSituation(blinds=(big // 2, big), street=street, facing_bet_to=facing, actor_in_before=in_before,
                        last_raise_size=last, trips=tuple(tuple(t) for t in trips), declaration=declaration,
                        stack_before=stack)


@settings(max_examples=300, deadline=None)
@given(situation=situations(), book=st.sampled_from(SHIPPED_RULEBOOKS))
def test_ruling_invariants(situation: BetSituation, book: str) -> None:
    ruling = rule_bet(situation=situation, rulebook=load_rulebook(book))
    felt = situation.actor_in_before + sum(c.denom * c.count for trip in situation.trips for c in trip)
    assert ruling.chips_to_add == 0 or ruling.chips_returned == 0
    if ruling.action != "player_choice":
        assert ruling.total_to == felt + ruling.chips_to_add - ruling.chips_returned
    assert ruling.total_to >= situation.actor_in_before
    cap = None if situation.stack_before is None else situation.actor_in_before + situation.stack_before
    if cap is not None:
        assert ruling.total_to <= cap
    if ruling.action in ("bet", "raise"):
        assert ruling.total_to >= ruling.min_raise_to and ruling.reopens_betting
    if ruling.action == "call":
        assert ruling.total_to == max(situation.facing_bet_to, situation.blinds[1] if situation.street == "preflop"
                                      else 0)
    if ruling.action == "player_choice":
        actions = {option.action for option in ruling.options if option.chooser == "player"}
        assert len(actions) == 2 and actions & {"call", "check"} and actions & {"raise", "all_in"}
    assert ruling.next_min_raise_to > ruling.next_facing_bet_to
    assert ruling.all_in == (cap is not None and ruling.total_to == cap and cap > situation.actor_in_before
                             and ruling.action != "player_choice")
    assert all(citation.rulebook == book for citation in ruling.citations)
    assert BetRuling.model_validate(ruling.model_dump()).model_dump() == ruling.model_dump()  # within its bounds
