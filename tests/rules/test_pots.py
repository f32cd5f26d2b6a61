"""Dead button (003 7-5, 7-9, 7-11), antes and big-blind antes, side pots; pokerkit as the oracle for the pots."""

from __future__ import annotations

import random
from typing import Any

import pytest

from floorman.core.events import EventBase
from floorman.core.rule_ids import RuleId
from floorman.rules.checker import TableChecker
from floorman.rules.pots import BlindSeats, Pot, blind_seats, side_pots
from floorman.rules.rulebook import load_rulebook
from floorman.rules.state import HandState
from tests.rules.checking import rules_of, run
from tests.rules.factories import Stream


def feed(state: HandState, *batches: list[EventBase]) -> None:
    for batch in batches:
        for event in batch:
            state.update(event)


# ------------------------------------------------------------------------------------- blinds, dead button


def test_first_hand_blinds_are_the_two_seats_after_the_button() -> None:
    assert blind_seats(seats=[1, 3, 5, 7], button=7, previous_big=None) == BlindSeats(small=1, big=3)
    assert blind_seats(seats=[1, 3], button=3, previous_big=None) == BlindSeats(small=3, big=1)  # 003 7-11
    assert blind_seats(seats=[4], button=4, previous_big=None) == BlindSeats(small=None, big=None)


def test_003_7_5_the_big_blind_always_advances_one_seat() -> None:
    # last hand: button 1, small 2, big 3; nobody left: the usual rotation
    assert blind_seats(seats=[1, 2, 3, 4, 5], button=2, previous_big=3) == BlindSeats(small=3, big=4)
    # the small blind (seat 2) went out: the big blind still moves to 4, the button lies dead on 2
    assert blind_seats(seats=[1, 3, 4, 5], button=2, previous_big=3) == BlindSeats(small=3, big=4)


def test_003_7_9_no_small_blind_when_its_seat_is_empty() -> None:
    """The big blind (seat 3) went out: seat 4 posts the big blind and nobody the small one."""
    assert blind_seats(seats=[1, 2, 4, 5], button=2, previous_big=3) == BlindSeats(small=None, big=4)
    # the moving-button look-alike would have made 4 the small blind and 5 the big blind: not this system
    assert blind_seats(seats=[1, 2, 4, 5], button=2, previous_big=None) == BlindSeats(small=4, big=5)


def test_003_7_11_heads_up_the_small_blind_is_the_other_seat() -> None:
    assert blind_seats(seats=[2, 5], button=2, previous_big=2) == BlindSeats(small=2, big=5)


def test_hand_state_moves_the_big_blind_past_a_busted_big_blind() -> None:
    stream = Stream(stacks={1: 5000, 2: 5000, 3: 200, 4: 5000, 5: 5000})
    state = HandState(table_id="t1", rulebook=load_rulebook("ggc"))
    feed(state, stream.level(100, 200), stream.button(1), stream.seat_stacks(), stream.shuffle(),
         stream.push(2, 100), stream.push(3, 200), stream.deal([2, 3, 4, 5, 1]))
    assert [(a.seat, a.kind) for a in state.log] == [(2, "post_small_blind"), (3, "post_big_blind")]
    assert state.all_in_seats == (3,)
    # seat 3 lost everything; the dealer puts the button on 2 (the last small blind)
    feed(state, stream.shuffle(), stream.button(2), stream.push(4, 200), stream.deal([4, 5, 1, 2]))
    assert [(a.seat, a.kind) for a in state.log[2:]] == [(4, "post_big_blind")]
    assert (state.hand, state.actor, state.seats_in_hand) == (2, 5, (1, 2, 4, 5))


# ------------------------------------------------------------------------------------------------- antes


def test_big_blind_ante_is_dead_money_not_part_of_the_big_blind() -> None:
    stream = Stream(stacks={1: 10_000, 2: 10_000, 3: 10_000, 4: 10_000})
    state = HandState(table_id="t1", rulebook=load_rulebook("tda2024"))
    feed(state, stream.level(100, 200, ante=200), stream.button(1), stream.seat_stacks(), stream.shuffle(),
         stream.push(2, 100), stream.push(3, 200, 200), stream.deal([2, 3, 4, 1]))
    assert (state.facing_bet_to, state.pot, state.anted) == (200, 500, {3})
    assert state.snapshot().seats[2].street_in == 200
    feed(state, stream.push(4, 200), stream.push(1, 200), stream.push(2, 100))
    state.flush()
    assert state.actor == 3  # the big blind still has his option: the ante was not a bet
    feed(state, stream.push(3, 200, 200))
    state.flush()
    assert (state.log[-1].kind, state.log[-1].total_to, state.pot) == ("raise", 600, 1400)


def test_classic_antes_from_every_seat_before_the_cards() -> None:
    stream = Stream(stacks={1: 10_000, 2: 10_000, 3: 10_000, 4: 25})
    state = HandState(table_id="t1", rulebook=load_rulebook("club_000"))
    feed(state, stream.level(100, 200, ante=50), stream.button(1), stream.seat_stacks(), stream.shuffle(),
         stream.push(2, 100), stream.push(3, 200), *(stream.push(s, 50) for s in (1, 2, 3)),
         stream.push(4, 25), stream.deal([2, 3, 4, 1]))
    assert state.anted == {1, 2, 3, 4} and state.pot == 100 + 200 + 3 * 50 + 25
    assert [(a.seat, a.kind) for a in state.log] == [(2, "post_small_blind"), (3, "post_big_blind")]
    assert state.all_in_seats == (4,) and state.actor == 1  # all-in for the ante: seat 4 has no action
    # the look-alike: a push of the ante's value after the cards is a bet (here a call short of 200)
    feed(state, stream.push(1, 50))
    state.flush()
    assert state.log[-1].seat == 1 and state.log[-1].kind != "post_small_blind"


# ------------------------------------------------------------------------------------------------- pots


def test_side_pots_three_all_ins_and_dead_money() -> None:
    contributions = {1: 300, 2: 1000, 3: 2500, 4: 2500, 5: 600}
    pots = side_pots(contributions, live=[1, 2, 3, 4], all_in=[1, 2])
    assert pots == [Pot(amount=300 * 5, eligible=(1, 2, 3, 4)),
                    Pot(amount=300 + 700 * 3, eligible=(2, 3, 4)),
                    Pot(amount=1500 * 2, eligible=(3, 4))]
    assert sum(p.amount for p in pots) == sum(contributions.values())


def test_an_uncalled_excess_is_its_own_layer() -> None:
    pots = side_pots({1: 500, 2: 3000}, live=[1, 2], all_in=[1])
    assert pots == [Pot(amount=1000, eligible=(1, 2)), Pot(amount=2500, eligible=(2,))]
    assert [p.uncalled for p in pots] == [False, True]


def _pokerkit_hand(rng: random.Random, *, players: int, ante: int) -> tuple[Any, list[tuple[int, str, int]]]:
    """A random pre-flop (fold / call / all-in) in pokerkit; the actions as (index, kind, chips put in)."""
    pokerkit = pytest.importorskip("pokerkit")
    automations = (pokerkit.Automation.ANTE_POSTING, pokerkit.Automation.BET_COLLECTION,
                   pokerkit.Automation.BLIND_OR_STRADDLE_POSTING, pokerkit.Automation.CARD_BURNING,
                   pokerkit.Automation.HOLE_DEALING)
    stacks = tuple(25 * rng.randint(20, 200) for _ in range(players))
    game = pokerkit.NoLimitTexasHoldem.create_state(automations, True, ante, (100, 200), 200, stacks, players)
    actions: list[tuple[int, str, int]] = []
    while game.actor_index is not None:
        actor = game.actor_index
        choice = rng.random()
        if choice < 0.25 and game.checking_or_calling_amount:
            game.fold()
            actions.append((actor, "fold", 0))
        elif choice < 0.6 and game.can_complete_bet_or_raise_to():
            actions.append((actor, "chips", game.stacks[actor]))
            game.complete_bet_or_raise_to(game.stacks[actor] + game.bets[actor])
        else:
            actions.append((actor, "chips", min(game.checking_or_calling_amount, game.stacks[actor])))
            game.check_or_call()
    return game, actions


@pytest.mark.parametrize("seed", range(40))
def test_hand_state_pots_match_pokerkit(seed: int) -> None:
    """Seats 1..n are pokerkit's players 0..n-1 (small blind first, button last); antes from every seat."""
    rng = random.Random(seed)
    players, ante = rng.randint(3, 6), rng.choice([0, 25])
    game, actions = _pokerkit_hand(rng, players=players, ante=ante)
    stream = Stream(stacks={i + 1: stack for i, stack in enumerate(game.starting_stacks)})
    state = HandState(table_id="t1", rulebook=load_rulebook("tda2024"))
    feed(state, stream.level(100, 200, ante=ante), stream.button(players), stream.seat_stacks(), stream.shuffle(),
         stream.push(1, *[25] * 4), stream.push(2, *[25] * 8),
         *(stream.push(seat, 25) for seat in range(1, players + 1) if ante),
         stream.deal(list(range(1, players + 1))))
    for index, kind, chips in actions:
        seat = index + 1
        if kind == "fold":
            feed(state, stream.fold(seat))
        elif chips == 0:
            feed(state, stream.tap(seat))
        else:
            feed(state, stream.push(seat, *[25] * (chips // 25)))
    state.flush()
    ours = [(p.amount, p.eligible) for p in state.pots if not p.uncalled]
    theirs = [(pot.amount, tuple(i + 1 for i in pot.player_indices)) for pot in game.pots]
    if len(theirs) == 1 and len(theirs[0][1]) == 1:
        theirs = []  # everyone folded to one player: pokerkit gives him the pot, we see an uncalled layer
        ours = [(p.amount, p.eligible) for p in state.pots if len(p.eligible) > 1]
    assert ours == theirs


# ------------------------------------------------------------------------------------------ F4 with side pots


def _side_pot_hand() -> tuple[TableChecker, Stream, list[EventBase]]:
    """ggc, button 1, blinds 2/3. Seat 4 all-in 1025; 1 calls; 2 raises to 2100; 3 folds (200 dead); 1 calls.
    Main pot 3 x 1025 + 200 = 3275 (131 chips of 25, open to 1, 2, 4); side pot 2150 (open to 1, 2)."""
    stream = Stream(stacks={1: 10_000, 2: 10_000, 3: 10_000, 4: 1025})
    checker = TableChecker(table_id="t1", rulebook=load_rulebook("ggc"))
    events = [*stream.level(100, 200), *stream.button(1), *stream.seat_stacks(), *stream.shuffle(),
              *stream.push(2, 100), *stream.push(3, 200), *stream.deal([2, 3, 4, 1]),
              *stream.push(4, *[25] * 41), *stream.push(1, *[25] * 41), *stream.push(2, *[500] * 4),
              *stream.fold(3), *stream.push(1, *[25] * 43), *stream.gather(),
              *stream.board("2C", "7D", "9H"), *stream.board("JS"), *stream.board("KC"), *stream.gather()]
    return checker, stream, events


def test_odd_chip_003_9_9_and_9_10_split_main_pot_with_a_side_pot() -> None:
    """1 and 4 split the main pot, 1 wins the side pot: the odd chip goes to 4, the first left of the button."""
    checker, stream, events = _side_pot_hand()
    run(checker, events)
    assert [(p.amount, p.eligible) for p in checker.state.pots] == [(3275, (1, 2, 4)), (2150, (1, 2))]
    alerts = run(checker, stream.award({1: 1650 + 2150, 4: 1625}))
    found = rules_of(alerts, RuleId.ODD_CHIP)
    assert len(found) == 1
    assert "belongs to seat(s) [4], given to seat(s) [1]." in found[0].explanation.en
    assert "9-9" in [c.rule for c in found[0].citations]


@pytest.mark.parametrize("shares", [{1: 1625 + 2150, 4: 1650}, {4: 3275, 1: 2150}, {1: 3275 + 2150}],
                         ids=["odd-chip-right", "main-to-4-side-to-1", "all-to-1"])
def test_odd_chip_side_pot_look_alikes_are_not_flagged(shares: dict[int, int]) -> None:
    checker, stream, events = _side_pot_hand()
    alerts = run(checker, events, stream.award(shares))
    assert rules_of(alerts, RuleId.ODD_CHIP) == []
