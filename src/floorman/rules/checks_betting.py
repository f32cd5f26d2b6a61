"""Betting checks, read from the acts the camera sees (chips over the bet line, taps, cards to the muck).

- A8 string bet (000 9-3/9-16, 004 9-3/9-17, 003 8-3/8-16): a seat's push in several trips beyond the call
  with no declaration heard; provisional, since a declared amount would make it legal.
- A1 opening bet below the big blind, A3 raise below the minimum (per rulebook), A11 under-call, A4 a re-raise
  by a player the short all-in did not reopen the betting to: from the bet ruling of each completed action.
- B1 splashing: chips pushed that came to rest in the pot instead of the seat's bet zone.
- C1 acting out of turn: a push, tap or fold by a seat while another seat has the action.
- C2 skipped player (000 9-15, 004 9-15): three players acted after the seat whose turn it was.
"""

from __future__ import annotations

from dataclasses import dataclass

from floorman.core.events import ChipsPushed, Declaration, EventBase
from floorman.core.rule_ids import RuleId
from floorman.rules.check_base import Check, View, enabled
from floorman.rules.findings import Evidence, Finding
from floorman.rules.params import SkippedPlayer, StringBetEffect
from floorman.rules.state import HandAction, PendingPush, Street


def verify_string_bet(event: ChipsPushed, view: View, *, pending: PendingPush | None) -> Finding | None:
    """A8: the seat's trips so far (`pending`) go beyond the call, in more than one trip, with nothing declared."""
    if pending is None or not can_string_bet(pending, event=event, view=view):
        return None
    facing = pending.facing_to
    effect = view.book.parameters.string_bet_effect
    if effect.value is StringBetEffect.FIRST_STEP_ONLY:
        fr_effect, en_effect = "seule la première étape compte", "only the first trip counts"
    else:
        fr_effect, en_effect = "interdite, l'arbitre décide", "forbidden, the director rules"
    trips = len(pending.trips)
    fr = (f"Siège {event.seat} : mise en {trips} allers ({pending.value} au total, face à {facing}) sans annonce "
          f"entendue : mise étirée ({fr_effect}). Provisoire si une annonce a pu être faite.")
    en = (f"Seat {event.seat}: a push in {trips} trips ({pending.value} in all, facing {facing}) with no "
          f"declaration heard: string bet ({en_effect}). Provisional if a declaration may have been made.")
    evidence = Evidence(seqs=[pending.seq], frames=[pending.frame], t_start=pending.t, t_end=pending.t).add(event)
    return evidence.finding(rule=RuleId.STRING_BET, seat=event.seat, key=f"act{pending.seq}", fr=fr, en=en,
                            provisional=not view.settings.declarations_heard, refs=effect.cite)


def can_string_bet(pending: PendingPush, *, event: ChipsPushed, view: View) -> bool:
    """Several trips of one seat, chips beyond the call, and no declaration on record."""
    if pending.seat != event.seat or len(pending.trips) < 2 or pending.declared:
        return False
    facing = pending.facing_to
    if view.state.street is Street.PREFLOP:
        facing = max(facing, view.state.blinds[1])
    return pending.in_before + pending.value > facing


def landed_confidence(event: ChipsPushed) -> float:
    """How sure it is that the seat's chips came to rest where they landed, whatever their value."""
    return event.confidence if event.landed_confidence is None else event.landed_confidence


def verify_splash(event: ChipsPushed, view: View) -> Finding | None:
    """B1: the chips came to rest in the pot, not in the seat's bet zone. Where they came to rest is what B1 rests
    on, not their value: a push whose chips were counted sure there and whose values were not (chips under a top
    seen from above, their sides too thin to read) is a splash all the same, its amount told as read. A push whose
    landing is unsure is set aside (a pot misread as growing after a pick-up looks the same)."""
    if event.landed_zone.startswith("bet_") or not view.chips_sure(landed_confidence(event)):
        return None
    if view.chips_sure(event.confidence):
        fr_value, en_value = f"{event.value} en jetons", f"{event.value} in chips"
    else:
        fr_value, en_value = f"des jetons (lus {event.value}, valeur incertaine)", f"chips (read {event.value}, unsure)"
    fr = (f"Siège {event.seat} : {fr_value} lancés dans le pot ({event.landed_zone}) au lieu d'être "
          "posés à mi-chemin.")
    en = f"Seat {event.seat}: {en_value} thrown into the pot ({event.landed_zone}) instead of half-way."
    return Evidence.of(event).finding(rule=RuleId.SPLASHING_POT, seat=event.seat, key=f"push{event.seq}",
                                      fr=fr, en=en, confidence=landed_confidence(event))


def verify_out_of_turn_push(event: ChipsPushed, pending: PendingPush | None) -> Finding | None:
    """C1: the first trip of a push (`pending`) by a seat that did not have the action."""
    if event.trip != 1 or pending is None or pending.seq != event.seq or not pending.out_of_turn:
        return None
    return _out_of_turn(Evidence.of(event), seat=event.seat, key=f"act{event.seq}", what=("mise", "push"))


def _out_of_turn_action(action: HandAction) -> Finding:
    """C1 for an action out of turn, once completed (a push out of turn read sure is flagged as it lands)."""
    what = ("mise", "push") if action.trips else ("abandon", "fold") if action.kind == "fold" else ("parole", "check")
    return _out_of_turn(_action_evidence(action), seat=action.seat, key=f"act{action.seq}", what=what)


def _out_of_turn(evidence: Evidence, *, seat: int, key: str, what: tuple[str, str]) -> Finding:
    fr = f"Siège {seat} : {what[0]} hors de son tour de parole."
    en = f"Seat {seat}: {what[1]} out of turn."
    return evidence.finding(rule=RuleId.OUT_OF_TURN, seat=seat, key=key, fr=fr, en=en)


def _action_evidence(action: HandAction) -> Evidence:
    return Evidence(seqs=[action.seq], frames=[action.frame], t_start=action.t, t_end=action.t)


def can_under_raise(action: HandAction) -> bool:
    """A3: a push below the minimum raise is one, unless a lone oversized chip ruled a call (a look-alike)."""
    return not (action.chips == 1 and action.kind in ("call", "check"))


def verify_ruled_action(action: HandAction) -> list[Finding]:
    """A1, A3, A4, A11 from the ruling of a completed push."""
    ruling = action.ruling
    if ruling is None:
        return []
    rule_ids = ruling.rule_ids
    short_raise = not action.could_raise and action.total_to > action.facing_to \
        and action.kind in ("raise", "all_in", "bet")
    if not (short_raise or RuleId.MIN_OPENING_BET in rule_ids or RuleId.UNDER_RAISE in rule_ids
            or RuleId.UNDER_CALL in rule_ids):
        return []
    evidence = _action_evidence(action)
    found: list[Finding] = []
    key = f"act{action.seq}"
    why_fr, why_en = ruling.explanation.fr, ruling.explanation.en
    if RuleId.MIN_OPENING_BET in ruling.rule_ids:
        found.append(evidence.finding(
            rule=RuleId.MIN_OPENING_BET, seat=action.seat, key=key, provisional=ruling.provisional,
            fr=f"Siège {action.seat} : ouverture inférieure au gros blind. {why_fr}",
            en=f"Seat {action.seat}: an opening bet below the big blind. {why_en}"))
    if RuleId.UNDER_RAISE in ruling.rule_ids and not ruling.string_bet and can_under_raise(action):
        found.append(evidence.finding(
            rule=RuleId.MIN_RAISE, seat=action.seat, key=key, provisional=ruling.provisional,
            fr=f"Siège {action.seat} : relance inférieure au minimum ({ruling.min_raise_to}). {why_fr}",
            en=f"Seat {action.seat}: a raise below the minimum ({ruling.min_raise_to}). {why_en}"))
    if RuleId.UNDER_CALL in ruling.rule_ids:
        found.append(evidence.finding(
            rule=RuleId.UNDER_CALL, seat=action.seat, key=key,
            fr=f"Siège {action.seat} : suivi insuffisant (il devait {ruling.to_call}). {why_fr}",
            en=f"Seat {action.seat}: an under-call (owed {ruling.to_call}). {why_en}"))
    if short_raise:
        found.append(evidence.finding(
            rule=RuleId.SHORT_ALLIN_RERAISE, seat=action.seat, key=key,
            fr=f"Siège {action.seat} : relance à {action.total_to} alors qu'un tapis insuffisant ne lui a pas rouvert "
               "les enchères (suivre ou se coucher).",
            en=f"Seat {action.seat}: a raise to {action.total_to} although the short all-in did not reopen the "
               "betting to him (call or fold only)."))
    return found


def faced_allin_below_big_blind(action: HandAction, view: View) -> bool:
    """After the flop, a bet below the big blind is an all-in; before it, an all-in below the big blind this hand."""
    big_blind = view.state.blinds[1]
    if action.street is not Street.PREFLOP:
        return 0 < action.facing_to < big_blind
    for earlier in reversed(view.state.log):
        if earlier.hand != action.hand or earlier.street is not action.street:
            break
        if earlier.seq < action.seq and earlier.kind == "all_in" and earlier.total_to < big_blind:
            return True
    return False


def verify_allin_below_big_blind(action: HandAction, found: list[Finding], *, view: View) -> list[Finding]:
    """A2 (000 9-6/9-7, 004 9-6/9-7, 003 8-6/8-7): facing an all-in below the big blind, an under-call or a raise
    short of the minimum takes the A2 rule in place of A3 / A11."""
    ruling = action.ruling
    short = [f for f in found if f.rule in (RuleId.MIN_RAISE, RuleId.UNDER_CALL)]
    if ruling is None or not (short or RuleId.UNDER_CALL in ruling.rule_ids):
        return found
    if not enabled(view, RuleId.ALLIN_BELOW_BIG_BLIND) or not faced_allin_below_big_blind(action, view):
        return found
    params = view.book.parameters
    preflop = action.street is Street.PREFLOP
    param = params.allin_below_bb_preflop if preflop else params.allin_below_bb_postflop
    if any(f.rule is RuleId.MIN_RAISE for f in short):
        what_fr, what_en = f"relance sous {ruling.min_raise_to}", f"a raise below {ruling.min_raise_to}"
    else:
        what_fr, what_en = "moins que le suivi complet", "less than the full call"
    rule_fr = ("suivre le gros blind, relancer à 2 gros blinds au moins" if preflop
               else "suivre le tapis, ou relancer d'un gros blind au moins au-dessus")
    rule_en = ("call the full big blind or raise to at least two big blinds" if preflop
               else "call the all-in, or raise by at least one big blind over it")
    finding = _action_evidence(action).finding(
        rule=RuleId.ALLIN_BELOW_BIG_BLIND, seat=action.seat, key=f"act{action.seq}", refs=param.cite,
        provisional=any(f.provisional for f in short),
        fr=f"Siège {action.seat} : face à un tapis inférieur au gros blind, {what_fr} ; il faut {rule_fr}.",
        en=f"Seat {action.seat}: facing an all-in below the big blind, {what_en}; the rule is to {rule_en}.")
    return [f for f in found if f not in short] + [finding]


def verify_declaration_settles(event: Declaration, view: View, *, raised: set[str]) -> Finding | None:
    """A8 settled: the amount (or all-in) is declared for the push in progress, e.g. a late keypad entry."""
    pending = view.state.pending
    if pending is None or pending.seat != event.seat or event.declaration not in _SETTLING:
        return None
    key = f"act{pending.seq}"
    if key not in raised:
        return None
    raised.discard(key)
    amount = f" {event.amount}" if event.amount else ""
    return Evidence.of(event).finding(
        rule=RuleId.STRING_BET, seat=event.seat, key=key, confidence=0.0, cleared=True,
        fr=f"Levée : annonce « {event.declaration}{amount} » du siège {event.seat} pour cette mise.",
        en=f"Settled: seat {event.seat} declared '{event.declaration}{amount}' for this push.")


_SETTLING = ("raise_to", "bet", "all-in")


class BettingChecks(Check):
    """A1, A3, A4, A8, A11, B1 and C1."""

    rules = (RuleId.MIN_OPENING_BET, RuleId.MIN_RAISE, RuleId.SHORT_ALLIN_RERAISE, RuleId.STRING_BET,
             RuleId.UNDER_CALL, RuleId.SPLASHING_POT, RuleId.OUT_OF_TURN)
    events = (ChipsPushed, Declaration)
    reads_actions = True

    def __init__(self) -> None:
        self._string_bets: set[str] = set()

    def observe(self, event: EventBase, view: View) -> list[Finding]:
        if isinstance(event, Declaration):
            settled = verify_declaration_settles(event, view, raised=self._string_bets)
            return [] if settled is None else [settled]
        assert isinstance(event, ChipsPushed)
        splash = verify_splash(event, view)  # where the chips landed, not the hand's amounts
        if not view.chips_sure(event.confidence, view.state.chip_doubt):
            # the chips were read unsure: the push, and the hand's amounts, prove nothing
            return [splash] if splash is not None and enabled(view, splash.rule) else []
        pending = view.state.pending
        candidates = (verify_string_bet(event, view, pending=pending), splash,
                      verify_out_of_turn_push(event, pending))
        found = [f for f in candidates if f is not None and enabled(view, f.rule)]
        self._string_bets.update(f.key for f in found if f.rule is RuleId.STRING_BET)
        return found

    def on_actions(self, actions: tuple[HandAction, ...], view: View) -> list[Finding]:
        found: list[Finding] = []
        for action in actions:
            if not view.chips_sure(action.confidence):
                if action.skipped is not None:  # its turn is sure whatever the amounts: see HandAction.skipped
                    found.append(_out_of_turn_action(action))
                continue
            found.extend(verify_allin_below_big_blind(action, verify_ruled_action(action), view=view))
            if action.out_of_turn and action.trips == 0:
                found.append(_out_of_turn_action(action))
        return [f for f in found if enabled(view, f.rule)]


@dataclass
class _Skipped:
    seat: int
    hand: int
    street: Street
    after: list[HandAction]


class SkippedPlayerCheck(Check):
    """C2: three players acted after the seat whose turn it was (000 9-15, 004 9-15)."""

    rules = (RuleId.SKIPPED_PLAYER,)
    reads_actions = True

    def __init__(self) -> None:
        self._skipped: dict[int, _Skipped] = {}

    def on_actions(self, actions: tuple[HandAction, ...], view: View) -> list[Finding]:
        if view.book.parameters.skipped_after_three_actions.value is SkippedPlayer.UNSPECIFIED:
            return []
        state = view.state
        found: list[Finding] = []
        for action in actions:
            if not view.chips_sure(action.confidence):
                continue  # the turn order rests on amounts read unsure
            for seat, skipped in list(self._skipped.items()):
                if (seat == action.seat or skipped.hand != action.hand or skipped.street is not action.street
                        or seat not in state.seats_in_hand):
                    del self._skipped[seat]
                    continue
                skipped.after.append(action)
                if len(skipped.after) == 3:
                    found.append(self._finding(skipped, view))
            actor = state.actor
            if action.out_of_turn and actor is not None and actor not in self._skipped:
                self._skipped[actor] = _Skipped(seat=actor, hand=action.hand, street=action.street, after=[action])
        return found

    @staticmethod
    def _finding(skipped: _Skipped, view: View) -> Finding:
        evidence = Evidence(seqs=[a.seq for a in skipped.after], frames=[a.frame for a in skipped.after],
                            t_start=skipped.after[0].t, t_end=skipped.after[-1].t)
        param = view.book.parameters.skipped_after_three_actions
        seats = ", ".join(str(a.seat) for a in skipped.after)
        return evidence.finding(
            rule=RuleId.SKIPPED_PLAYER, seat=skipped.seat, key=f"skip{skipped.after[0].seq}", refs=param.cite,
            fr=f"Siège {skipped.seat} sauté : trois joueurs ({seats}) ont agi après lui ; il perd le droit de miser "
               "si le pot n'était pas ouvert, sa main est morte s'il l'était.",
            en=f"Seat {skipped.seat} was skipped: three players ({seats}) acted after him; he loses the right to bet "
               "if the pot was unopened, his hand is dead if it was opened.")
