"""The rules checker: events in, alerts out, one hand state per table.

`TableChecker.process(event)` feeds the event to the table's `HandState`, runs the checks that read that event
type (and the checks that read the actions it completed), and turns their findings into `Alert`s: the
rulebook's severity and citations, the sanction its ladder suggests (never applied), and the retroactivity
window (CATALOG F7: the next shuffle or the next blinds, per rulebook). Findings with the same hand, rule, seat
and key are one alert: a duplicate is merged into it and not published again; a finding that clears an alert
(GGC rabbit hunting agreed by all) publishes it again with confidence 0.

`RulesChecker` keeps one `TableChecker` per table id. Which checks run is rulebook data: a check runs only if
the rulebook turns one of its rules on.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from floorman.core.alerts import Alert, Citation, Explanation, Severity, SuggestedSanction
from floorman.core.alerts import Evidence as AlertEvidence
from floorman.core.events import EventBase
from floorman.core.rule_ids import RuleId
from floorman.rules.check_base import Check, View
from floorman.rules.checks_award import OddChipCheck
from floorman.rules.checks_betting import BettingChecks, SkippedPlayerCheck
from floorman.rules.checks_cards import AllInRevealCheck, DealCheck, HoleCardsCheck, PrematureCardCheck, RabbitHuntCheck
from floorman.rules.checks_chips import ChipLedgerCheck, HiddenChipsCheck
from floorman.rules.findings import CheckerSettings, Finding
from floorman.rules.params import NextHandStart
from floorman.rules.rulebook import Rulebook, SanctionKind
from floorman.rules.sanctions import SanctionRegister
from floorman.rules.state import HandAction, HandState

logger = logging.getLogger(__name__)

_RETRO = {
    NextHandStart.SHUFFLE: ("Décision possible jusqu'au mélange du coup suivant.",
                            "Open until the shuffle of the next hand."),
    NextHandStart.BLINDS: ("Décision possible jusqu'à la pose des blinds du coup suivant.",
                           "Open until the blinds of the next hand are posted."),
}
_HAND_BOUND = ("A", "B", "C", "E", "F")
"""Rules whose decisions belong to a hand, and so to its retroactivity window (CATALOG F7)."""


@dataclass
class HandWindow:
    """One hand's life: when it started, when it was over, and when decisions on it closed (CATALOG F7)."""

    hand: int
    started_at: float
    ended_at: float | None = None
    """The first time at most one player was left in it (or the next hand started)."""
    closed_at: float | None = None
    """The next hand's start per the rulebook: its shuffle (000 11-1) or its blinds (003 7-4)."""


def all_checks() -> list[Check]:
    """A fresh instance of every check (checks keep per-table memory)."""
    return [BettingChecks(), SkippedPlayerCheck(), HiddenChipsCheck(), ChipLedgerCheck(), PrematureCardCheck(),
            DealCheck(), HoleCardsCheck(), AllInRevealCheck(), RabbitHuntCheck(), OddChipCheck()]


class TableChecker:
    """The checks of one table under one rulebook."""

    def __init__(self, *, table_id: str, rulebook: Rulebook, settings: CheckerSettings | None = None,
                 register: SanctionRegister | None = None) -> None:
        self.table_id = table_id
        self.rulebook = rulebook
        self.settings = settings or CheckerSettings()
        self.register = register or SanctionRegister(rulebook=rulebook, tournament_id=f"table-{table_id}")
        self.state = HandState(table_id=table_id, rulebook=rulebook, sure_fold=self.settings.ledger_min_confidence)
        self._enabled = frozenset(rulebook.enabled_rules())
        checks = [c for c in all_checks() if any(rule in self._enabled for rule in c.rules)]
        self._by_type: dict[type[EventBase], list[Check]] = {}
        for check in checks:
            for kind in check.events:
                self._by_type.setdefault(kind, []).append(check)
        self._ticking = [c for c in checks if c.ticks]
        self._plans: dict[type[EventBase], tuple[tuple[Check, ...], tuple[Check, ...]]] = {}
        self._action_checks = [c for c in checks if c.reads_actions]
        self._view = View(book=rulebook, settings=self.settings, state=self.state)
        self._alerts: dict[tuple[int, RuleId, int | None, str], Alert] = {}
        self.events = 0
        self.now = 0.0
        """Time of the last event taken: when the alerts it raises are raised."""
        self.windows: dict[int, HandWindow] = {}
        """Every hand's window, by hand number."""

    @property
    def alerts(self) -> tuple[Alert, ...]:
        """Every alert so far, merged, in the order they were first raised."""
        return tuple(self._alerts.values())

    def process(self, event: EventBase) -> list[Alert]:
        """Take one event; return the alerts it raised (or cleared)."""
        self.events += 1
        self.now = event.t
        state = self.state
        hand = state.hand
        actions = state.update(event)
        if actions or state.hand != hand:  # a hand ends only by an action (the last fold)
            self._follow_hands(event, previous=hand, actions=actions)
        plan = self._plans.get(type(event))
        if plan is None:
            plan = self._plan(type(event))
        view = self._view
        found: list[Finding] = []
        for check in plan[0]:
            found += check.observe(event, view)
        for check in plan[1]:
            if check.busy:
                found += check.observe(event, view)
        if actions:
            for check in self._action_checks:
                found += check.on_actions(actions, view)
        return self._publish(found) if found else []

    def _plan(self, kind: type[EventBase]) -> tuple[tuple[Check, ...], tuple[Check, ...]]:
        """The checks an event type goes to: those that read it, and the ticking ones (while busy)."""
        plan = (tuple(self._by_type.get(kind, ())), tuple(c for c in self._ticking if kind not in c.events))
        self._plans[kind] = plan
        return plan

    def _follow_hands(self, event: EventBase, *, previous: int, actions: tuple[HandAction, ...]) -> None:
        """Open, end and close the hand windows (CATALOG F7)."""
        hand = self.state.hand
        window = self.windows.get(hand)
        if window is None:
            window = self.windows[hand] = HandWindow(hand=hand, started_at=event.t)
            before = self.windows.get(previous)
            if before is not None:
                before.ended_at = event.t if before.ended_at is None else before.ended_at
                if self.rulebook.parameters.next_hand_start.value is not NextHandStart.BLINDS:
                    before.closed_at = event.t
        if self.state.hand_over and window.ended_at is None:
            window.ended_at = event.t
        if any(a.kind in ("post_small_blind", "post_big_blind") for a in actions):
            before = self.windows.get(hand - 1)
            if before is not None and before.closed_at is None:
                before.closed_at = event.t

    def flush(self) -> list[Alert]:
        """End of the stream: complete the push in progress and check it."""
        actions = self.state.flush()
        found: list[Finding] = []
        for check in self._action_checks:
            found.extend(check.on_actions(actions, self._view))
        return self._publish(found)

    def _publish(self, findings: Iterable[Finding]) -> list[Alert]:
        out: list[Alert] = []
        for finding in findings:
            if finding.rule not in self._enabled:
                continue
            hand = self.state.hand
            key = (hand, finding.rule, finding.seat, finding.key)
            known = self._alerts.get(key)
            if known is None:
                alert = self._alert(finding, hand=hand)
                out.append(alert)
            else:
                alert = self._merge(known, finding)
                if finding.cleared:
                    out.append(alert)
            self._alerts[key] = alert
        return out

    def _alert(self, finding: Finding, *, hand: int) -> Alert:
        entry = self.rulebook.rule(finding.rule)
        assert entry is not None
        first = finding.seqs[0] if finding.seqs else 0
        seat = "x" if finding.seat is None else str(finding.seat)
        fr, en = finding.fr, finding.en
        text, suggestion = self._sanction(finding)
        retro = _RETRO.get(self.rulebook.parameters.next_hand_start.value)
        if retro is not None and hand > 0 and finding.rule.value.startswith(_HAND_BOUND):
            fr, en = f"{fr} {retro[0]}", f"{en} {retro[1]}"
        return Alert(
            alert_id=f"{self.table_id}-{hand}-{finding.rule.value}-{seat}-{first}", table_id=self.table_id,
            hand_number=hand, rule=finding.rule, seat=finding.seat, severity=entry.severity,
            confidence=finding.confidence, provisional=finding.provisional, citations=self._citations(finding),
            evidence=AlertEvidence(t_start=finding.t_start, t_end=max(finding.t_start, finding.t_end),
                                   frames=finding.frames, event_seqs=finding.seqs),
            explanation=Explanation(fr=fr, en=en), sanction=text, suggested_sanction=suggestion,
            raised_at=self.now)

    def _citations(self, finding: Finding) -> tuple[Citation, ...]:
        entry = self.rulebook.rule(finding.rule)
        refs = [quote.ref for quote in entry.citations] if entry is not None else []
        quotes = self.rulebook.quotes()
        refs += [ref for ref in finding.refs if ref in quotes]
        if finding.rule.value.startswith(_HAND_BOUND):
            refs += [ref for ref in self.rulebook.parameters.next_hand_start.cite if ref in quotes]
        return self.rulebook.citations_of(tuple(refs))

    def _sanction(self, finding: Finding) -> tuple[str | None, SuggestedSanction | None]:
        """The sanction the ladder suggests for this seat's infraction (a suggestion only), as text and data.

        The register is the tournament's: what the director recorded (the ladder climbs on it) and how many
        alerts of the rule the seat had, across hands and tables."""
        entry = self.rulebook.rule(finding.rule)
        if entry is None or entry.sanction.kind is SanctionKind.NONE:
            return (entry.sanction.remedy_en or None if entry is not None else None), None
        player = "dealer" if finding.seat is None else f"{self.table_id}/seat {finding.seat}"
        flagged = self.register.flag(player=player, infraction=finding.rule)
        suggestion = self.register.suggest(player=player, infraction=finding.rule, big_blind=self.state.blinds[1])
        data = SuggestedSanction(
            player=player, level=suggestion.level, name_fr=suggestion.name_fr, name_en=suggestion.name_en,
            sanction_fr=suggestion.sanction_fr, sanction_en=suggestion.sanction_en, fine=suggestion.fine,
            occurrence=suggestion.occurrence, flagged=flagged, alternatives=suggestion.alternatives,
            reasons=suggestion.reasons)
        if suggestion.level is None:
            return "level: TD (the rule states no level)", data
        text = f"{suggestion.name_en} ({suggestion.name_fr}): {suggestion.sanction_en}"
        if suggestion.fine is not None:
            text += f"; fine {suggestion.fine}"
        if suggestion.alternatives:
            text += f"; or {' / '.join(suggestion.alternatives)} at the director's choice"
        return f"suggested, not applied: {text}", data

    @staticmethod
    def _merge(known: Alert, finding: Finding) -> Alert:
        evidence = known.evidence
        merged = AlertEvidence(t_start=min(evidence.t_start, finding.t_start),
                               t_end=max(evidence.t_end, finding.t_end),
                               frames=tuple(dict.fromkeys((*evidence.frames, *finding.frames))),
                               event_seqs=tuple(dict.fromkeys((*evidence.event_seqs, *finding.seqs))))
        update: dict[str, object] = {"evidence": merged}
        if finding.cleared:
            update.update(confidence=0.0, severity=Severity.INFO, provisional=False,
                          explanation=Explanation(fr=f"{finding.fr} {known.explanation.fr}",
                                                  en=f"{finding.en} {known.explanation.en}"))
        else:
            update["confidence"] = max(known.confidence, finding.confidence)
        return known.model_copy(update=update)


class RulesChecker:
    """One `TableChecker` per table id, all under one rulebook."""

    def __init__(self, *, rulebook: Rulebook, settings: CheckerSettings | None = None,
                 register: SanctionRegister | None = None) -> None:
        self.rulebook = rulebook
        self.settings = settings or CheckerSettings()
        self.register = register
        self.tables: dict[str, TableChecker] = {}

    def table(self, table_id: str) -> TableChecker:
        checker = self.tables.get(table_id)
        if checker is None:
            checker = TableChecker(table_id=table_id, rulebook=self.rulebook, settings=self.settings,
                                   register=self.register)
            self.tables[table_id] = checker
            logger.debug("checking table %s under rulebook %s", table_id, self.rulebook.id)
        return checker

    def process(self, event: EventBase) -> list[Alert]:
        checker = self.tables.get(event.table_id)
        if checker is None:
            checker = self.table(event.table_id)
        return checker.process(event)

    def flush(self) -> list[Alert]:
        return [alert for checker in self.tables.values() for alert in checker.flush()]
