"""Card checks: the deal, the board, the showdown and after the hand.

- E2 premature card (003 2-4, 2-13..2-16): a burn or board card while a live player still owes an action.
- E3 card exposed during the deal (003 2-5..2-7): a hole card that lands face up.
- E4 burn-card errors (003 2-8..2-11): a street opened without a burn, two burns, a burn inside the flop, a burn
  card face up.
- E7 hole cards not visible (000 13-1, 003 13-1): a live player's cards leave the table without reaching the
  muck for more than a few seconds.
- F2 all-in reveal (000 10-7, 003 9-7): a live hand still face down when a board card comes with no more
  betting possible.
- F6 rabbit hunting (000 14-3, 003 14-3): after a hand won by folds, cards turned face up from the stub before
  the next shuffle. GGC allows it when every player of the hand agrees (`declaration` "agree_rabbit").
"""

from __future__ import annotations

from dataclasses import dataclass

from floorman.core.events import CardDealt, Declaration, EventBase, HandZone, ZoneCards
from floorman.core.rule_ids import RuleId
from floorman.rules.check_base import Check, View
from floorman.rules.findings import Evidence, Finding
from floorman.rules.params import RabbitHunting
from floorman.rules.state import Street

_STREET_STARTS = {0: ("le flop", "the flop"), 3: ("le turn", "the turn"), 4: ("la river", "the river")}


def verify_premature_card(event: CardDealt, view: View) -> Finding | None:
    """E2: the card came while the betting round was still open."""
    state = view.state
    if not state.card_while_round_open:
        return None
    if view.chips_sure(state.chip_doubt):
        actor = state.actor
    elif state.owed_at_card is not None:  # a seat that had shown no action yet owed one, however the chips read
        actor = state.owed_at_card
    else:
        return None  # (the round's state rests on the hand's amounts; read unsure, they prove nothing)
    what = ("carte brûlée", "burn card") if event.to_zone == "muck" else ("carte du tableau", "board card")
    return Evidence.of(event).finding(
        rule=RuleId.PREMATURE_BOARD_CARD, seat=None, key=f"premature-{state.street.value}",
        fr=f"{what[0].capitalize()} donnée avant la fin du tour d'enchères (siège {actor} doit encore parler) : "
           "les cartes sont reprises.",
        en=f"{what[1].capitalize()} dealt before the betting round ended (seat {actor} still owes an action): the "
           "cards are taken back.")


class PrematureCardCheck(Check):
    """E2."""

    rules = (RuleId.PREMATURE_BOARD_CARD,)
    events = (CardDealt,)

    def observe(self, event: EventBase, view: View) -> list[Finding]:
        assert isinstance(event, CardDealt)
        finding = verify_premature_card(event, view)
        return [finding] if finding is not None else []


def verify_exposed_deal_card(event: CardDealt, index: int) -> Finding | None:
    """E3: a hole card landed face up; the 1st or 2nd card of the deal exposed is a misdeal (003 2-5)."""
    if not event.face_up:
        return None
    card = event.card or "?"
    if index <= 2:
        fr_what, en_what = "fausse donne", "misdeal"
    else:
        fr_what, en_what = "la carte est échangée avec la carte brûlée", "the card is swapped with the burn card"
    return Evidence.of(event).finding(
        rule=RuleId.CARD_EXPOSED_DURING_DEAL, seat=None, key=f"deal{event.seq}",
        fr=f"Carte {card} du siège {event.seat} retournée pendant la donne (carte n° {index}) : {fr_what}.",
        en=f"Card {card} of seat {event.seat} exposed during the deal (card #{index}): {en_what}.")


class DealCheck(Check):
    """E3 and E4: the deal, burns and board."""

    rules = (RuleId.CARD_EXPOSED_DURING_DEAL, RuleId.BURN_CARD_ERROR)
    events = (CardDealt,)

    def __init__(self) -> None:
        self._hand = -1
        self._dealt = 0
        self._face_down = 0
        self._burns = 0
        self._board = 0

    def observe(self, event: EventBase, view: View) -> list[Finding]:
        assert isinstance(event, CardDealt)
        state = view.state
        if state.hand != self._hand:
            self._hand, self._dealt, self._burns, self._board, self._face_down = state.hand, 0, 0, 0, 0
        if event.to_zone.startswith("hole_"):
            self._dealt += 1
            self._face_down += 0 if event.face_up else 1
            if not state.blinds_posted and not self._face_down:
                return []  # every card face up and no blinds: a chip race (000 12-2, 003 12-2), not a deal
            finding = verify_exposed_deal_card(event, self._dealt)
        elif not state.dealt or state.hand_over or state.street is Street.WAITING:
            return []
        elif event.to_zone == "muck":
            self._burns += 1
            finding = self._exposed_burn(event) if event.face_up else None
        elif event.to_zone == "board":
            finding = self.verify_burn(event)
            self._board += 1
        else:
            return []
        return [finding] if finding is not None else []

    def verify_burn(self, event: CardDealt) -> Finding | None:
        """E4: each street opens with exactly one burn; none inside the flop."""
        burns, self._burns = self._burns, 0 if self._board in _STREET_STARTS else self._burns
        key = f"burn{self._hand}-{self._board}"
        if self._board in _STREET_STARTS:
            street_fr, street_en = _STREET_STARTS[self._board]
            if burns == 1:
                return None
            if burns == 0:
                fr, en = f"{street_fr.capitalize()} sans carte brûlée", f"{street_en.capitalize()} without a burn card"
            else:
                fr, en = f"{burns} cartes brûlées avant {street_fr}", f"{burns} burn cards before {street_en}"
        elif burns:
            fr, en = "Carte brûlée au milieu du flop", "A burn card in the middle of the flop"
        else:
            return None
        return Evidence.of(event).finding(
            rule=RuleId.BURN_CARD_ERROR, seat=None, key=key,
            fr=f"{fr} ; l'ordre des cartes est connu par la vidéo.",
            en=f"{en}; the video record gives the order of the cards.")

    def _exposed_burn(self, event: CardDealt) -> Finding:
        return Evidence.of(event).finding(
            rule=RuleId.BURN_CARD_ERROR, seat=None, key=f"burnup{event.seq}",
            fr=f"Carte brûlée {event.card or ''} donnée face visible.".replace("  ", " "),
            en=f"Burn card {event.card or ''} dealt face up.".replace("  ", " "))


@dataclass
class _Lifted:
    seq: int
    t: float
    frame: int
    reported: bool = False


class HoleCardsCheck(Check):
    """E7: a live player's cards left the hole zone and did not reach the muck (the state's `lifted` seats)."""

    rules = (RuleId.HOLE_CARDS_VISIBLE,)
    events = (ZoneCards,)
    ticks = True

    def __init__(self) -> None:
        self._lifted: dict[int, _Lifted] = {}

    @property
    def busy(self) -> bool:
        return bool(self._lifted)

    def observe(self, event: EventBase, view: View) -> list[Finding]:
        lifted_now = view.state.lifted
        if not lifted_now and not self._lifted:
            return []
        found: list[Finding] = []
        for seat in [s for s in self._lifted if s not in lifted_now]:
            lifted = self._lifted.pop(seat)
            back = isinstance(event, ZoneCards) and event.seat == seat and (event.face_down or event.face_up)
            if back:
                found += self.verify_hole_cards(seat, lifted=lifted, event=event, view=view, back=True)
        for seat, (seq, t, frame) in lifted_now.items():
            lifted = self._lifted.setdefault(seat, _Lifted(seq=seq, t=t, frame=frame))
            found += self.verify_hole_cards(seat, lifted=lifted, event=event, view=view, back=False)
        return found

    @staticmethod
    def verify_hole_cards(seat: int, *, lifted: _Lifted, event: EventBase, view: View, back: bool) -> list[Finding]:
        """E7: the cards stayed off the table (not in the muck) for `hole_hidden_min_s` or more."""
        held = event.t - lifted.t
        if lifted.reported or held < view.settings.hole_hidden_min_s:
            return []
        lifted.reported = True
        param = view.book.parameters.hole_card_position
        still = "revenues après" if back else "toujours hors de vue après"
        still_en = "back after" if back else "still out of sight after"
        evidence = Evidence(seqs=[lifted.seq], frames=[lifted.frame], t_start=lifted.t, t_end=lifted.t).add(event)
        return [evidence.finding(
            rule=RuleId.HOLE_CARDS_VISIBLE, seat=seat, key=f"lifted{lifted.seq}", refs=param.cite,
            fr=f"Siège {seat} : cartes privatives levées de la table sans aller à l'étalage, {still} {held:.1f} s ; "
               "elles doivent rester visibles sur la table.",
            en=f"Seat {seat}: hole cards lifted off the table without going to the muck, {still_en} {held:.1f} s; "
               "they must stay visible on the table.")]


class AllInRevealCheck(Check):
    """F2: with no more betting possible, every live hand is turned face up before the next card."""

    rules = (RuleId.ALLIN_SHOWDOWN_REVEAL,)
    events = (ZoneCards, CardDealt)

    def __init__(self) -> None:
        self._shown: dict[int, bool] = {}
        self._hand = -1

    def observe(self, event: EventBase, view: View) -> list[Finding]:
        state = view.state
        if state.hand != self._hand:
            self._hand, self._shown = state.hand, {}
        if isinstance(event, ZoneCards):
            if event.zone.startswith("hole_") and event.seat is not None:
                self._shown[event.seat] = bool(event.face_up) and event.face_down == 0
            return []
        assert isinstance(event, CardDealt)
        if event.to_zone != "board" or not can_run_out(view):
            return []
        return [Evidence.of(event).finding(
            rule=RuleId.ALLIN_SHOWDOWN_REVEAL, seat=seat, key=f"reveal{state.hand}-{seat}",
            fr=f"Siège {seat} : main encore cachée alors qu'il y a tapis et plus d'enchères possibles ; toutes les "
               "mains sont retournées.",
            en=f"Seat {seat}: hand still face down with an all-in and no more betting possible; every live hand "
               "is turned face up.")
            for seat in state.seats_in_hand if not self._shown.get(seat, False)]


def can_run_out(view: View) -> bool:
    """At least one all-in, at most one live player with chips, and nobody owes an action."""
    state = view.state
    if state.hand_over or state.round_open or not state.all_in_seats:
        return False
    with_chips = [s for s in state.seats_in_hand if s not in state.all_in_seats]
    return len(with_chips) <= 1


class RabbitHuntCheck(Check):
    """F6."""

    rules = (RuleId.RABBIT_HUNTING,)
    events = (CardDealt, HandZone, Declaration)

    def __init__(self) -> None:
        self._hand = -1
        self._asker: int | None = None
        self._agreed: set[int] = set()
        self._raised: Finding | None = None

    def observe(self, event: EventBase, view: View) -> list[Finding]:
        state = view.state
        rule = view.book.parameters.rabbit_hunting
        if rule.value is RabbitHunting.UNSPECIFIED:
            return []
        if state.hand != self._hand:
            self._hand, self._asker, self._agreed, self._raised = state.hand, None, set(), None
        if isinstance(event, HandZone):
            if event.zone in ("deck", "board") and event.seat is not None and state.hand_over:
                self._asker = event.seat
            return []
        if isinstance(event, Declaration):
            return self._agree(event, view)
        assert isinstance(event, CardDealt)
        if not (state.hand_over and event.face_up and event.to_zone in ("board", "deck")):
            return []
        if event.card is None:
            return []  # a face-up card nobody could read is no evidence of a card turned from the stub
        if not view.chips_sure(state.hand_over_confidence):
            return []  # the hand ended on a fold read from amounts read unsure: no evidence the hand was over
        if self._all_agree(view):
            return []
        finding = self.verify_rabbit_hunt(event, view)
        self._raised = finding
        return [finding]

    def _all_agree(self, view: View) -> bool:
        return (view.book.parameters.rabbit_hunting.value is RabbitHunting.FORBIDDEN_UNLESS_ALL_AGREE
                and bool(view.state.dealt) and view.state.dealt <= self._agreed)

    def _agree(self, event: Declaration, view: View) -> list[Finding]:
        if event.declaration != "agree_rabbit":
            return []
        self._agreed.add(event.seat)
        raised = self._raised
        if raised is None or not self._all_agree(view):
            return []
        self._raised = None
        return [Finding(rule=raised.rule, seat=raised.seat, key=raised.key, t_start=raised.t_start, t_end=event.t,
                        fr="Levée : tous les joueurs de la coup ont accepté de voir les cartes (003 14-3).",
                        en="Cleared: every player of the hand agreed to see the cards (003 14-3).",
                        frames=(*raised.frames, event.frame), seqs=(*raised.seqs, event.seq), confidence=0.0,
                        refs=raised.refs, cleared=True)]

    def verify_rabbit_hunt(self, event: CardDealt, view: View) -> Finding:
        """F6: a card turned from the stub after a hand won by folds, before the next shuffle."""
        state = view.state
        rule = view.book.parameters.rabbit_hunting
        seat = self._asker if self._asker is not None else state.last_folder
        consent = rule.value is RabbitHunting.FORBIDDEN_UNLESS_ALL_AGREE
        fr_tail = (" Autorisé seulement si tous les joueurs sont d'accord : provisoire." if consent else "")
        en_tail = (" Allowed only if every player agrees: provisional." if consent else "")
        who = "" if self._asker is not None else " (le dernier à s'être couché)"
        who_en = "" if self._asker is not None else " (the last player to fold)"
        return Evidence.of(event).finding(
            rule=RuleId.RABBIT_HUNTING, seat=seat, key=f"rabbit{state.hand}", refs=rule.cite,
            confidence=1.0 if self._asker is not None else 0.8, provisional=consent,
            fr=f"Carte {event.card} retournée du talon après la fin du coup (rabbit hunting), demandée par le siège "
               f"{seat}{who}.{fr_tail}",
            en=f"Card {event.card} turned from the stub after the hand ended (rabbit hunting), asked by seat "
               f"{seat}{who_en}.{en_tail}")
