"""Bet rulings: a pure function of the betting situation and the chips pushed (`floorman ruling`).

`rule_bet(situation=..., rulebook=...)` answers what a push *is* under a rulebook: call, bet, raise (completed
to the minimum or not), all-in, check, or the player's (or director's) choice, with the chips to add or give
back, whether the betting reopens, the next minimum raise, the citations and a French/English explanation.
It covers TDA 45 (multiple chips), the 50% rule, the single oversized chip, under-raises and under-calls,
string bets (what counts when a push takes several trips), short all-ins and the minimum re-raise after them.
Every club difference comes from the rulebook's parameters (`floorman.rules.params`), never from its id.

Amounts are "to" amounts for the street: `total_to` is what the actor has in front of him after the ruling.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal

from floorman.core.alerts import Explanation
from floorman.core.chips import ChipCount, chips_value
from floorman.core.rule_ids import RuleId
from floorman.rules.params import (
    MinFirstRaise,
    MinReraise,
    MultiChipRule,
    ShortAllinMinReraise,
    SingleChipDeclaredRaise,
    SingleChipFacingBet,
    StringBetEffect,
    Under50Silent,
)
from floorman.rules.rulebook import Rulebook
from floorman.rules.ruling_models import (
    Action,
    BetAmount,
    BetRuling,
    BetSituation,
    DeclarationWord,
    RaiseTo,
    RulingOption,
)

__all__ = ["BetAmount", "BetRuling", "BetSituation", "RaiseTo", "RulingOption", "minimum_raise_to", "rule_bet"]


@dataclass(slots=True)
class _Spot:
    """The situation with its derived amounts."""

    situation: BetSituation
    book: Rulebook
    big_blind: int
    facing: int
    in_before: int
    last_raise: int
    chips: tuple[ChipCount, ...]
    pushed: int
    stack: int | None
    minimum: int | None = None
    """`_min_raise_to`, once computed (the spot never changes)."""

    @property
    def owed(self) -> int:
        return self.facing - self.in_before

    @property
    def felt(self) -> int:
        return self.in_before + self.pushed

    @property
    def preflop(self) -> bool:
        return self.situation.street == "preflop"

    @property
    def all_in(self) -> bool:
        return self.stack is not None and self.pushed >= self.stack

    @property
    def chip_count(self) -> int:
        return sum(c.count for c in self.chips)


def _spot(situation: BetSituation, book: Rulebook, *, trips: tuple[tuple[ChipCount, ...], ...]) -> _Spot:
    big_blind = situation.blinds[1]
    facing = situation.facing_bet_to
    if situation.street == "preflop":
        facing = max(facing, big_blind)  # the big blind is a bet even when posted short (9-6, 8-6)
    chips = tuple(chip for trip in trips for chip in trip)
    return _Spot(situation=situation, book=book, big_blind=big_blind, facing=facing,
                 in_before=situation.actor_in_before, last_raise=situation.last_raise_size, chips=chips,
                 pushed=chips_value(chips), stack=situation.stack_before)


def _opening_faced(spot: _Spot) -> bool:
    """Whether the bet faced is the first of the street (an opening bet, or the big blind pre-flop)."""
    if spot.preflop:
        return spot.facing == spot.big_blind
    return spot.facing == spot.last_raise


def _min_raise_to(spot: _Spot) -> int:
    """Minimum legal raise-to facing the current bet (or minimum opening bet when there is none)."""
    if spot.minimum is None:
        spot.minimum = _compute_min_raise_to(spot)
    return spot.minimum


def _compute_min_raise_to(spot: _Spot) -> int:
    params = spot.book.parameters
    facing, big_blind = spot.facing, spot.big_blind
    if facing == 0:
        return big_blind
    if not spot.preflop and facing < big_blind:
        return facing + big_blind  # all-in below the big blind after the flop (A2)
    increment = max(spot.last_raise, big_blind)
    if spot.situation.facing_all_in:
        return _after_short_allin(spot, allin_to=facing)
    if _opening_faced(spot):
        first = params.min_first_raise.value
        if first is MinFirstRaise.DOUBLE_BET:
            return 2 * facing
        if first is MinFirstRaise.INCREMENT_AT_LEAST_BET:
            return facing + spot.last_raise
        return facing + increment
    if params.min_reraise_rule.value is MinReraise.DOUBLE_PREVIOUS_TOTAL:
        return 2 * facing
    return facing + increment


def _after_short_allin(spot: _Spot, *, allin_to: int) -> int:
    """Minimum re-raise after an all-in raise to `allin_to` that is not a full raise (A4)."""
    rule = spot.book.parameters.short_allin_min_reraise.value
    if rule is ShortAllinMinReraise.DOUBLE_ALLIN:
        return 2 * allin_to
    if rule is ShortAllinMinReraise.ALLIN_PLUS_MAX_BIG_BLIND_ORIGINAL_INCREMENT:
        return allin_to + max(spot.big_blind, spot.last_raise)
    return allin_to + spot.last_raise


def _next_after_bet_or_raise(spot: _Spot, *, total: int) -> tuple[int, int]:
    """(next minimum raise-to, next last increment) after a bet or a full raise to `total`."""
    params = spot.book.parameters
    increment = total - spot.facing
    if spot.facing == 0:  # an opening bet: the next raise is a first raise
        rule_first = params.min_first_raise.value
        if rule_first is MinFirstRaise.DOUBLE_BET:
            return 2 * total, increment
        if rule_first is MinFirstRaise.INCREMENT_AT_LEAST_BET:
            return total + increment, increment
        return total + max(increment, spot.big_blind), increment
    if params.min_reraise_rule.value is MinReraise.DOUBLE_PREVIOUS_TOTAL:
        return 2 * total, increment
    return total + max(increment, spot.big_blind), increment


def _after(spot: _Spot, *, action: Action, total: int) -> tuple[bool, int, int, int]:
    """(reopens, next minimum raise-to, next facing, next last increment) after `action` to `total`."""
    if total <= spot.facing or action in ("call", "check", "player_choice"):
        return False, _min_raise_to(spot), spot.facing, spot.last_raise
    if spot.facing == 0 and total < spot.big_blind:  # all-in bet below the big blind after the flop (A2)
        return True, total + spot.big_blind, total, spot.big_blind
    if spot.facing == 0 or total >= _min_raise_to(spot):
        next_min, next_last = _next_after_bet_or_raise(spot, total=total)
        return True, next_min, total, next_last
    return False, _after_short_allin(spot, allin_to=total), total, spot.last_raise  # short all-in raise (A4)


def _cap(spot: _Spot) -> int | None:
    """The most the actor can have in this street (None when the stack is unknown)."""
    return None if spot.stack is None else spot.in_before + spot.stack


def _rule_refs(spot: _Spot, rule_id: RuleId) -> tuple[str, ...]:
    entry = spot.book.rule(rule_id)
    return () if entry is None else tuple(quote.ref for quote in entry.citations)


def _min_raise_refs(spot: _Spot) -> tuple[str, ...]:
    params = spot.book.parameters
    if spot.situation.facing_all_in:
        return params.short_allin_min_reraise.cite + params.short_allin_reopen.cite
    if not spot.preflop and 0 < spot.facing < spot.big_blind:
        return params.allin_below_bb_postflop.cite
    return params.min_first_raise.cite if _opening_faced(spot) else params.min_reraise_rule.cite


@dataclass(slots=True)
class _Outcome:
    """A ruling before the chip arithmetic and the citations are filled in."""

    action: Action
    total_to: int
    refs: tuple[str, ...]
    rule_ids: tuple[RuleId, ...]
    fr: str
    en: str
    provisional: bool = False
    options: tuple[RulingOption, ...] = ()
    notes: tuple[str, ...] = ()


def _call(spot: _Spot, *, refs: tuple[str, ...], rule_ids: tuple[RuleId, ...], why: tuple[str, str],
          provisional: bool = False) -> _Outcome:
    """Call (or check), all-in for less when the stack cannot cover it."""
    cap = _cap(spot)
    if cap is not None and cap <= spot.facing and cap > spot.in_before:
        return _Outcome("all_in", cap, refs, rule_ids, f"Tapis pour {cap} (suivi incomplet) : {why[0]}.",
                        f"All-in for {cap} (a call for less): {why[1]}.", provisional)
    if spot.owed == 0:
        return _Outcome("check", spot.facing, refs, rule_ids, f"Parole : {why[0]}.", f"Check: {why[1]}.",
                        provisional)
    return _Outcome("call", spot.facing, refs, rule_ids, f"Suivi à {spot.facing} : {why[0]}.",
                    f"Call to {spot.facing}: {why[1]}.", provisional)


def _raise(spot: _Spot, *, total: int, refs: tuple[str, ...], rule_ids: tuple[RuleId, ...],
           why: tuple[str, str], provisional: bool = False) -> _Outcome:
    """Bet or raise to `total`, all-in when the stack is short of it."""
    cap = _cap(spot)
    if cap is not None and total >= cap:
        return _all_in(spot, total=cap, refs=refs, rule_ids=rule_ids, why=why, provisional=provisional)
    if spot.facing == 0:
        return _Outcome("bet", total, refs, rule_ids, f"Ouverture à {total} : {why[0]}.",
                        f"Bet of {total}: {why[1]}.", provisional)
    return _Outcome("raise", total, refs, rule_ids, f"Relance à {total} : {why[0]}.",
                    f"Raise to {total}: {why[1]}.", provisional)


def _all_in(spot: _Spot, *, total: int, refs: tuple[str, ...], rule_ids: tuple[RuleId, ...],
            why: tuple[str, str], provisional: bool = False) -> _Outcome:
    """All-in to `total`; a short all-in raise adds the re-raise rules (A4), a short opening bet A2."""
    params = spot.book.parameters
    if spot.facing > 0 and spot.facing < total < _min_raise_to(spot):
        refs = refs + params.short_allin_min_reraise.cite + params.short_allin_reopen.cite
        rule_ids = (*rule_ids, RuleId.SHORT_ALLIN_RERAISE)
        why = (why[0] + " ; relance à tapis insuffisante, les enchères ne sont pas rouvertes",
               why[1] + "; an all-in below a full raise does not reopen the betting")
    elif spot.facing == 0 and total < spot.big_blind:
        refs = refs + params.allin_below_bb_postflop.cite
        rule_ids = (*rule_ids, RuleId.ALLIN_BELOW_BIG_BLIND)
    return _Outcome("all_in", total, refs, rule_ids, f"Tapis à {total} : {why[0]}.", f"All-in to {total}: {why[1]}.",
                    provisional)


def _complete(spot: _Spot, *, total: int, refs: tuple[str, ...], rule_ids: tuple[RuleId, ...],
              why: tuple[str, str], provisional: bool) -> _Outcome:
    """A bet or raise completed to `total` (the minimum)."""
    return _raise(spot, total=total, refs=refs, rule_ids=rule_ids, provisional=provisional,
                  why=(f"{why[0]}, complété au minimum", f"{why[1]}, completed to the minimum"))


def _silent(spot: _Spot) -> _Outcome:
    """A push with no declaration heard."""
    params = spot.book.parameters
    if spot.pushed == 0:
        return _call(spot, refs=(), rule_ids=(), why=("aucun jeton avancé", "no chips pushed"))
    if spot.facing == 0:
        return _silent_open(spot)
    if spot.pushed < spot.owed:
        if spot.all_in:
            return _all_in(spot, total=spot.felt, refs=(), rule_ids=(), why=("derniers jetons", "last chips"))
        return _call(spot, refs=_rule_refs(spot, RuleId.UNDER_CALL), rule_ids=(RuleId.UNDER_CALL,),
                     why=("mise insuffisante, le complément est imposé", "an under-call is completed"))
    if spot.pushed == spot.owed:
        return _call(spot, refs=(), rule_ids=(), why=("le montant exact", "the exact amount"))
    if spot.chip_count == 1 and not spot.all_in and params.single_chip_facing_bet.value is SingleChipFacingBet.CALL:
        return _call(spot, refs=params.single_chip_facing_bet.cite, rule_ids=(RuleId.SINGLE_OVERSIZED_CHIP,),
                     why=("un jeton seul supérieur sans annonce vaut suivi", "a lone oversized chip without a "
                          "declaration is a call"), provisional=True)
    if spot.chip_count > 1 and params.multi_chip_rule.value is MultiChipRule.REMOVE_ONE_LOWEST_CHIP:
        return _multi_chip(spot)
    if spot.all_in:
        return _all_in(spot, total=spot.felt, refs=(), rule_ids=(), why=("derniers jetons", "last chips"))
    return _fifty(spot, refs=(), rule_ids=())


def _multi_chip(spot: _Spot) -> _Outcome:
    """TDA 45: remove one lowest chip; a call if every chip is needed, else the 50% rule or all-in."""
    refs = spot.book.parameters.multi_chip_rule.cite
    ids = (RuleId.MULTIPLE_CHIP_BET,)
    lowest = min(chip.denom for chip in spot.chips)
    if spot.pushed - lowest < spot.owed:
        return _call(spot, refs=refs, rule_ids=ids, provisional=True,
                     why=(f"chaque jeton est nécessaire (sans un jeton de {lowest} il reste moins que le call)",
                          f"every chip is needed (without one {lowest} chip less than the call remains)"))
    if spot.all_in:
        return _all_in(spot, total=spot.felt, refs=refs, rule_ids=ids, provisional=True,
                       why=("derniers jetons, pas tous nécessaires au call : tapis", "last chips, not all needed "
                            "for the call: all-in whether or not the 50% threshold is reached"))
    return _fifty(spot, refs=refs, rule_ids=ids)


def _fifty_threshold(spot: _Spot, min_to: int) -> int:
    if spot.book.parameters.fifty_pct_base.value == "min_raise_total":
        return math.ceil(min_to / 2)
    return spot.facing + math.ceil((min_to - spot.facing) / 2)


def _fifty(spot: _Spot, *, refs: tuple[str, ...], rule_ids: tuple[RuleId, ...]) -> _Outcome:
    """A silent push beyond the call and not all-in: full raise, completed raise (>= 50%) or call."""
    params = spot.book.parameters
    total, min_to = spot.felt, _min_raise_to(spot)
    if total >= min_to:
        return _raise(spot, total=total, refs=refs + _min_raise_refs(spot), rule_ids=(*rule_ids, RuleId.MIN_RAISE),
                      why=("relance complète en une fois", "a full raise in one motion"))
    threshold = _fifty_threshold(spot, min_to)
    refs = refs + params.fifty_pct_base.cite + _min_raise_refs(spot)
    rule_ids = (*rule_ids, RuleId.UNDER_RAISE)
    if total >= threshold:
        return _complete(spot, total=min_to, refs=refs, rule_ids=rule_ids, provisional=True,
                         why=(f"{total} atteint le seuil de 50% ({threshold})",
                              f"{total} reaches the 50% threshold ({threshold})"))
    refs = refs + params.under_50_silent.cite
    why = (f"{total} n'atteint pas le seuil de 50% ({threshold})", f"{total} is below the 50% threshold ({threshold})")
    if params.under_50_silent.value is Under50Silent.DIRECTOR_ASKS:
        return _choice(spot, refs=refs, rule_ids=rule_ids, min_to=min_to, why=why)
    return _call(spot, refs=refs, rule_ids=rule_ids, provisional=True,
                 why=(why[0] + ", le surplus est rendu", why[1] + ", the surplus is returned"))


def _option(spot: _Spot, outcome: _Outcome, *, chooser: Literal["player", "director"]) -> RulingOption:
    reopens, next_min, _, _ = _after(spot, action=outcome.action, total=outcome.total_to)
    return RulingOption(chooser=chooser, action=outcome.action, total_to=outcome.total_to,
                        chips_to_add=max(0, outcome.total_to - spot.felt),
                        chips_returned=max(0, spot.felt - outcome.total_to), reopens_betting=reopens,
                        next_min_raise_to=next_min, label=Explanation(fr=outcome.fr, en=outcome.en))


def _choice(spot: _Spot, *, refs: tuple[str, ...], rule_ids: tuple[RuleId, ...], min_to: int,
            why: tuple[str, str]) -> _Outcome:
    """The player states his intention: call, or the minimum legal raise (000 9-9)."""
    call = _call(spot, refs=refs, rule_ids=rule_ids, why=("le joueur choisit de suivre", "the player calls"))
    full = _complete(spot, total=min_to, refs=refs, rule_ids=rule_ids, provisional=True,
                     why=("le joueur choisit de relancer", "the player raises"))
    options = (_option(spot, call, chooser="player"), _option(spot, full, chooser="player"))
    return _Outcome("player_choice", spot.felt, refs, rule_ids,
                    f"Intention demandée au joueur : {why[0]} ; suivre à {spot.facing} ou relancer à {min_to}.",
                    f"The player is asked his intention: {why[1]}; call {spot.facing} or raise to {min_to}.",
                    provisional=True, options=options)


def _silent_open(spot: _Spot) -> _Outcome:
    """A silent push with no bet to face (after the flop): a bet, completed to the big blind if short."""
    params = spot.book.parameters
    refs: tuple[str, ...] = ()
    rule_ids: tuple[RuleId, ...] = ()
    provisional = False
    if spot.chip_count == 1:
        refs, rule_ids, provisional = params.single_chip_postflop_open.cite, (RuleId.SINGLE_OVERSIZED_CHIP,), True
    total = spot.felt
    if total >= spot.big_blind:
        return _raise(spot, total=total, refs=refs, rule_ids=rule_ids, provisional=provisional,
                      why=("ouverture du montant avancé", "a bet of the chips pushed"))
    if spot.all_in:
        return _all_in(spot, total=total, refs=refs, rule_ids=rule_ids,
                       why=("tapis inférieur au gros blind", "all-in for less than the big blind"))
    return _complete(spot, total=spot.big_blind, refs=refs + _rule_refs(spot, RuleId.MIN_OPENING_BET),
                     rule_ids=(*rule_ids, RuleId.MIN_OPENING_BET), provisional=provisional,
                     why=("ouverture inférieure au gros blind", "an opening bet below the big blind"))


def _declared(spot: _Spot, declaration: DeclarationWord | RaiseTo | BetAmount) -> _Outcome:
    """A push with a declaration heard: the words bind (A12); an under-raise is completed."""
    params = spot.book.parameters
    verbal = params.verbal_vs_act.cite
    if declaration == "call":
        return _call(spot, refs=verbal, rule_ids=(RuleId.VERBAL_DECLARATION,),
                     why=("annonce « suivi »", "'call' was declared"))
    if declaration == "all-in":
        cap = _cap(spot)
        notes: tuple[str, ...] = ()
        if cap is None:
            cap, notes = spot.felt, ("stack_before unknown: the chips pushed are taken as the whole stack",)
        outcome = _all_in(spot, total=max(cap, spot.in_before), refs=verbal, rule_ids=(RuleId.VERBAL_DECLARATION,),
                          why=("annonce « tapis »", "'all-in' was declared"))
        return replace(outcome, notes=notes)
    if isinstance(declaration, BetAmount):
        return _declared_to(spot, target=declaration.bet, refs=verbal, rule_ids=(RuleId.VERBAL_DECLARATION,))
    if isinstance(declaration, RaiseTo):
        return _declared_to(spot, target=declaration.raise_to, refs=verbal, rule_ids=(RuleId.VERBAL_DECLARATION,))
    refs: tuple[str, ...] = verbal
    rule_ids: tuple[RuleId, ...] = (RuleId.VERBAL_DECLARATION,)
    single = params.single_chip_declared_raise_no_amount
    if spot.chip_count == 1 and single.value is SingleChipDeclaredRaise.RAISE_TO_CHIP_VALUE:
        refs, rule_ids = refs + single.cite, (*rule_ids, RuleId.SINGLE_OVERSIZED_CHIP)
    return _declared_to(spot, target=spot.felt, refs=refs, rule_ids=rule_ids)


def _declared_to(spot: _Spot, *, target: int, refs: tuple[str, ...], rule_ids: tuple[RuleId, ...]) -> _Outcome:
    """A declared bet or raise to `target`: it binds; below the minimum it is completed (unless all-in)."""
    params = spot.book.parameters
    min_to = _min_raise_to(spot)
    cap = _cap(spot)
    word = ("ouverture annoncée", "a declared bet") if spot.facing == 0 else ("relance annoncée", "a declared raise")
    if cap is not None and target >= cap:
        return _all_in(spot, total=cap, refs=refs, rule_ids=rule_ids, why=word)
    if target >= min_to:
        return _raise(spot, total=target, refs=refs + _min_raise_refs(spot), rule_ids=(*rule_ids, RuleId.MIN_RAISE),
                      why=word)
    if spot.facing == 0:
        refs, rule_ids = refs + _rule_refs(spot, RuleId.MIN_OPENING_BET), (*rule_ids, RuleId.MIN_OPENING_BET)
    else:
        refs = refs + params.declared_under_raise.cite + _min_raise_refs(spot)
        rule_ids = (*rule_ids, RuleId.UNDER_RAISE)
    return _complete(spot, total=min_to, refs=refs, rule_ids=rule_ids, provisional=False,
                     why=(f"{word[0]} inférieure au minimum ({min_to})", f"{word[1]} below the minimum ({min_to})"))


def _is_string_bet(situation: BetSituation) -> bool:
    """Several trips, and chips beyond the call, with no declaration (CATALOG A8 trigger)."""
    if len(situation.trips) < 2 or situation.declaration is not None:
        return False
    facing = situation.facing_bet_to
    if situation.street == "preflop":
        facing = max(facing, situation.blinds[1])
    pushed = sum(chips_value(trip) for trip in situation.trips)
    return situation.actor_in_before + pushed > facing


def _string_bet(situation: BetSituation, book: Rulebook) -> BetRuling:
    """Several trips: 004 counts the first only; the others flag it and leave the choice to the director."""
    effect = book.parameters.string_bet_effect
    felt_spot = _spot(situation, book, trips=situation.trips)
    first = _silent(_spot(situation, book, trips=situation.trips[:1]))
    merged = _silent(_spot(situation, book, trips=(tuple(chip for trip in situation.trips for chip in trip),)))
    ids = (RuleId.STRING_BET,)
    trips = len(situation.trips)
    if effect.value is StringBetEffect.FIRST_STEP_ONLY:
        outcome = replace(first, refs=effect.cite + first.refs, rule_ids=ids + first.rule_ids, provisional=True,
                          fr=f"Mise en {trips} étapes : seule la première compte. {first.fr}",
                          en=f"A push in {trips} trips: only the first counts. {first.en}")
    else:
        options = (_option(felt_spot, merged, chooser="director"), _option(felt_spot, first, chooser="director"))
        outcome = replace(merged, refs=effect.cite + merged.refs, rule_ids=ids + merged.rule_ids, provisional=True,
                          options=options + merged.options,
                          fr=f"Mise étirée en {trips} étapes (interdite, effet non précisé : l'arbitre décide). "
                             f"{merged.fr}",
                          en=f"String bet in {trips} trips (forbidden, no stated effect: the director rules). "
                             f"{merged.en}")
    return _finish(felt_spot, outcome).model_copy(update={"string_bet": True})


def _finish(spot: _Spot, outcome: _Outcome) -> BetRuling:
    reopens, next_min, next_facing, next_last = _after(spot, action=outcome.action, total=outcome.total_to)
    choosing = outcome.action == "player_choice"
    refs = tuple(dict.fromkeys(outcome.refs))
    citations = spot.book.citations_of(refs)
    spent = outcome.total_to - spot.in_before
    return BetRuling(
        action=outcome.action,
        total_to=outcome.total_to,
        chips_to_add=0 if choosing else max(0, outcome.total_to - spot.felt),
        chips_returned=0 if choosing else max(0, spot.felt - outcome.total_to),
        reopens_betting=reopens,
        next_min_raise_to=next_min,
        options=outcome.options,
        citations=citations,
        explanation=Explanation(fr=outcome.fr, en=outcome.en),
        rulebook=spot.book.id,
        rule_ids=tuple(dict.fromkeys(outcome.rule_ids)),
        provisional=outcome.provisional and spot.situation.declaration is None,
        all_in=not choosing and spot.stack is not None and spent >= spot.stack > 0,
        string_bet=False,
        to_call=spot.owed,
        min_raise_to=_min_raise_to(spot),
        next_facing_bet_to=next_facing,
        next_last_raise_size=next_last,
        notes=outcome.notes,
    )


def minimum_raise_to(*, situation: BetSituation, rulebook: Rulebook) -> int:
    """Minimum legal raise-to for the actor of `situation` (the minimum opening bet when nothing is faced)."""
    return _min_raise_to(_spot(situation, rulebook, trips=situation.trips))


def rule_bet(*, situation: BetSituation, rulebook: Rulebook) -> BetRuling:
    """The ruling on a push under `rulebook` (the situation's own `rulebook` field is not read here)."""
    if _is_string_bet(situation):
        return _string_bet(situation, rulebook)
    spot = _spot(situation, rulebook, trips=situation.trips)
    if situation.declaration is None:
        return _finish(spot, _silent(spot))
    return _finish(spot, _declared(spot, situation.declaration))
