"""The sanction register: every sanction a director gave, per player, across a tournament.

`SanctionRegister.suggest(...)` proposes the next sanction for an infraction from the rulebook's ladder
(repetition of the same infraction, second faute in a tournament, a faute on a yellow card, ...). It never
applies it: the director decides, and `record(...)` writes what he decided. The register is saved as JSON
(`save` writes a temporary file then renames it, so a crash never leaves half a file) and loaded back with
`load` (strict: a bad entry is a SchemaError naming the file and the field) or `load_lenient` (keeps every
valid entry and lists the rejected ones).
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from floorman.core.alerts import Citation
from floorman.core.config import field_path
from floorman.core.errors import SchemaError
from floorman.core.rule_ids import RuleId
from floorman.rules.params import Source
from floorman.rules.rulebook import Promotion, PromotionCondition, RepeatRule, Rulebook, SanctionKind

logger = logging.getLogger(__name__)


class SanctionEntry(BaseModel):
    """One sanction the director gave."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    player: str = Field(min_length=1, description="Player id or name.")
    infraction: str = Field(min_length=1, description="What was done: a catalog id ('D2') or a free key.")
    base_level: str | None = Field(default=None, description="Level of the infraction before escalation.")
    suggested_level: str | None = Field(default=None, description="What the register suggested.")
    level: str = Field(description="The level the director applied.")
    at: datetime | None = Field(default=None, description="When it was given.")
    table_id: str | None = Field(default=None, description="Table.")
    hand: int | None = Field(default=None, ge=0, description="Hand number.")
    note: str = Field(default="", description="The director's note.")


class SanctionSuggestion(BaseModel):
    """The next sanction the ladder suggests for an infraction. A suggestion: nothing is applied."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    player: str = Field(description="Player.")
    infraction: str = Field(description="Infraction key.")
    base_level: str | None = Field(description="Level of the infraction itself; null when the rule has none.")
    level: str | None = Field(description="Suggested level; null for 'level: TD' or no sanction.")
    name_fr: str = Field(default="", description="Level name in French.")
    name_en: str = Field(default="", description="Level name in English.")
    sanction_fr: str = Field(default="", description="What it entails, in French.")
    sanction_en: str = Field(default="", description="What it entails, in English.")
    fine: int | None = Field(default=None, description="Fine in chips, when the level has one and the BB is known.")
    yellow_card: bool = Field(default=False, description="The level gives a yellow card.")
    ends_tournament: bool = Field(default=False, description="The level ends the player's tournament.")
    occurrence: int = Field(ge=1, description="The how-manieth time this player commits this infraction.")
    alternatives: tuple[str, ...] = Field(default=(), description="Other levels the rule names (director's pick).")
    reasons: tuple[str, ...] = Field(description="Why this level, step by step (English).")
    citations: tuple[Citation, ...] = Field(default=(), description="The rules used.")
    applied: Literal[False] = Field(default=False, description="Always false: the director applies sanctions.")


class RegisterFile(BaseModel):
    """The JSON file of a register."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = Field(default=1, description="Version of this format.")
    rulebook: str = Field(description="Rulebook id the levels belong to.")
    tournament_id: str = Field(min_length=1, description="Tournament.")
    entries: tuple[SanctionEntry, ...] = Field(default=(), description="Sanctions given, in order.")


class SanctionRegister:
    """The sanctions given in one tournament, per player, under one rulebook's ladder."""

    def __init__(self, *, rulebook: Rulebook, tournament_id: str, entries: Iterable[SanctionEntry] = ()) -> None:
        if not tournament_id:
            raise ValueError("tournament_id: expected a non-empty id, got ''")
        self.rulebook = rulebook
        self.tournament_id = tournament_id
        self._entries: list[SanctionEntry] = []
        self._flags: dict[tuple[str, str], int] = {}
        for entry in entries:
            self.record(entry)

    @property
    def entries(self) -> tuple[SanctionEntry, ...]:
        return tuple(self._entries)

    def history(self, player: str) -> tuple[SanctionEntry, ...]:
        return tuple(entry for entry in self._entries if entry.player == player)

    def record(self, entry: SanctionEntry) -> None:
        """Write a sanction the director applied. A bad level is a ValueError and changes nothing."""
        ladder = self.rulebook.sanctions
        for name in ("level", "base_level", "suggested_level"):
            value = getattr(entry, name)
            if value is not None:
                try:
                    ladder.rank(value)
                except ValueError as exc:
                    raise ValueError(f"{name}: {exc}") from None
        self._entries.append(entry)
        logger.info("sanction recorded: %s %s %s", entry.player, entry.infraction, entry.level)

    def replace_entries(self, entries: Iterable[SanctionEntry]) -> None:
        """Take the director's register as it now is (re-read from its file); the alert counts are kept."""
        previous = self._entries
        self._entries = []
        try:
            for entry in entries:
                self.record(entry)
        except ValueError:
            self._entries = previous
            raise

    def flag(self, *, player: str, infraction: str | RuleId) -> int:
        """Count one more alert of `infraction` for `player` (an alert, not a sanction); return the count."""
        key = (player, infraction.value if isinstance(infraction, RuleId) else infraction)
        count = self._flags.get(key, 0) + 1
        self._flags[key] = count
        return count

    def flagged(self, *, player: str, infraction: str | RuleId) -> int:
        """How many alerts of `infraction` `player` had in this tournament (kept across hands and tables)."""
        return self._flags.get((player, infraction.value if isinstance(infraction, RuleId) else infraction), 0)

    def suggest(self, *, player: str, infraction: str | RuleId, level: str | None = None,
                big_blind: int | None = None) -> SanctionSuggestion:
        """The next sanction for `player` committing `infraction` (base `level`, or the rule's own level)."""
        key = infraction.value if isinstance(infraction, RuleId) else infraction
        history = self.history(player)
        occurrence = 1 + sum(1 for entry in history if entry.infraction == key)
        base, alternatives, reasons, refs = self._base_level(infraction, level)
        if base is None:
            return SanctionSuggestion(player=player, infraction=key, base_level=None, level=None,
                                      occurrence=occurrence, reasons=tuple(reasons), citations=self._cite(refs))
        suggested = base
        for rule in self.rulebook.sanctions.repeats:
            if rule.level == base:
                suggested = self._repeat(rule, history=history, key=key, reasons=reasons, refs=refs)
        suggested = self._promote(suggested, history=history, reasons=reasons, refs=refs)
        return self._suggestion(player=player, key=key, base=base, level=suggested, occurrence=occurrence,
                                alternatives=alternatives, reasons=reasons, refs=refs, big_blind=big_blind)

    def _base_level(self, infraction: str | RuleId, level: str | None
                    ) -> tuple[str | None, tuple[str, ...], list[str], list[str]]:
        ladder = self.rulebook.sanctions
        reasons: list[str] = []
        refs: list[str] = list(ladder.cite) if ladder.source is Source.STATED else []
        if ladder.source in (Source.NOT_IN_SEEDS, Source.SILENT):
            reasons.append(f"configured default ladder: {ladder.note}")
        if level is not None:
            ladder.rank(level)
            reasons.append(f"level {level} given by the director")
            return level, (), reasons, refs
        rule = self.rulebook.rule(infraction) if isinstance(infraction, RuleId) else None
        if rule is None:
            raise ValueError(f"level: expected a level for infraction {infraction!r} (the rulebook "
                             f"{self.rulebook.id!r} has no rule for it), got None")
        refs.extend(quote.ref for quote in rule.citations)
        if rule.sanction.kind is SanctionKind.NONE:
            reasons.append(f"rule {rule.id.value} carries no sanction ({rule.sanction.remedy_en or 'remedy only'})")
            return None, (), reasons, refs
        if rule.sanction.kind is SanctionKind.DIRECTOR:
            reasons.append(f"rule {rule.id.value} states no level: level TD")
            return None, (), reasons, refs
        first, *others = rule.sanction.levels
        reasons.append(f"rule {rule.id.value} names {' or '.join(rule.sanction.levels)}")
        return first, tuple(others), reasons, refs

    def _repeat(self, rule: RepeatRule, *, history: tuple[SanctionEntry, ...], key: str, reasons: list[str],
                refs: list[str]) -> str:
        if rule.same_infraction:
            count = 1 + sum(1 for entry in history if entry.infraction == key)
            what = "the same infraction"
        else:
            count = 1 + sum(1 for entry in history if entry.base_level == rule.level)
            what = f"a {rule.level}"
        level = rule.sequence[min(count, len(rule.sequence)) - 1]
        if count > 1:
            reasons.append(f"{what} for the {_ordinal(count)} time: {level}")
            refs.extend(rule.cite)
        return level

    def _promote(self, level: str, *, history: tuple[SanctionEntry, ...], reasons: list[str],
                 refs: list[str]) -> str:
        ladder = self.rulebook.sanctions
        changed = True
        while changed:
            changed = False
            for promotion in ladder.promotions:
                applies = self._applies(promotion, level=level, history=history)
                if applies and ladder.rank(promotion.to) > ladder.rank(level):
                    reasons.append(_promotion_reason(promotion, level))
                    refs.extend(promotion.cite)
                    level, changed = promotion.to, True
        return level

    def _applies(self, promotion: Promotion, *, level: str, history: tuple[SanctionEntry, ...]) -> bool:
        ladder = self.rulebook.sanctions
        if promotion.only_that_level and level != promotion.level:
            return False
        if ladder.rank(level) < ladder.rank(promotion.level):
            return False
        if promotion.condition is PromotionCondition.UNDER_YELLOW_CARD:
            return any(ladder.level(entry.level).yellow_card for entry in history)
        return sum(1 for entry in history if entry.level == promotion.level) >= promotion.count - 1

    def _suggestion(self, *, player: str, key: str, base: str, level: str, occurrence: int,
                    alternatives: tuple[str, ...], reasons: list[str], refs: list[str],
                    big_blind: int | None) -> SanctionSuggestion:
        rung = self.rulebook.sanctions.level(level)
        fine = None
        if rung.fine_big_blinds:
            if big_blind is None:
                reasons.append(f"fine of {rung.fine_big_blinds} big blind(s): the current big blind is unknown")
            else:
                fine = rung.fine_big_blinds * big_blind
        return SanctionSuggestion(
            player=player, infraction=key, base_level=base, level=level, name_fr=rung.name_fr, name_en=rung.name_en,
            sanction_fr=rung.sanction_fr, sanction_en=rung.sanction_en, fine=fine, yellow_card=rung.yellow_card,
            ends_tournament=rung.ends_tournament, occurrence=occurrence, alternatives=alternatives,
            reasons=tuple(reasons), citations=self._cite(refs))

    def _cite(self, refs: Iterable[str]) -> tuple[Citation, ...]:
        return self.rulebook.citations_of(tuple(refs))

    # ------------------------------------------------------------------------------------------ persistence

    def to_json(self) -> str:
        document = RegisterFile(rulebook=self.rulebook.id, tournament_id=self.tournament_id, entries=self.entries)
        return document.model_dump_json(indent=2)

    def save(self, path: str | Path) -> None:
        """Write the register atomically: a temporary file in the same folder, then a rename."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                stream.write(self.to_json())
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    @classmethod
    def from_json(cls, text: str, *, rulebook: Rulebook, source: str) -> SanctionRegister:
        """Strict: any bad entry is a SchemaError naming the source and the field; nothing is dropped."""
        data = _decode(text, source=source)
        try:
            document = RegisterFile.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise SchemaError(f"{source}: field '{field_path(tuple(first['loc']))}': {first['msg']}") from None
        _check_rulebook(document.rulebook, rulebook, source=source)
        register = cls(rulebook=rulebook, tournament_id=document.tournament_id)
        for index, entry in enumerate(document.entries):
            try:
                register.record(entry)
            except ValueError as exc:
                name, _, message = str(exc).partition(": ")
                raise SchemaError(f"{source}: field 'entries[{index}].{name}': {message}") from None
        return register

    @classmethod
    def load(cls, path: str | Path, *, rulebook: Rulebook) -> SanctionRegister:
        return cls.from_json(_read(path), rulebook=rulebook, source=str(path))

    @classmethod
    def load_lenient(cls, path: str | Path, *, rulebook: Rulebook) -> tuple[SanctionRegister, tuple[str, ...]]:
        """Keep every valid entry; return the problems with the others (the file is not touched)."""
        source = str(path)
        data = _decode(_read(path), source=source)
        if not isinstance(data, dict) or not isinstance(data.get("tournament_id"), str):
            raise SchemaError(f"{source}: field 'tournament_id': expected the tournament id")
        _check_rulebook(str(data.get("rulebook")), rulebook, source=source)
        register = cls(rulebook=rulebook, tournament_id=data["tournament_id"])
        rejected: list[str] = []
        raw_entries = data.get("entries", [])
        for index, raw in enumerate(raw_entries if isinstance(raw_entries, list) else []):
            try:
                register.record(SanctionEntry.model_validate(raw))
            except ValidationError as exc:
                first = exc.errors()[0]
                rejected.append(f"entries[{index}].{field_path(tuple(first['loc']))}: {first['msg']}")
            except ValueError as exc:
                rejected.append(f"entries[{index}].{exc}")
        for problem in rejected:
            logger.warning("%s: rejected sanction entry %s", source, problem)
        return register, tuple(rejected)


def _read(path: str | Path) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise SchemaError(f"{path}: cannot read the file: {exc.strerror or exc}") from None


def _decode(text: str, *, source: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SchemaError(f"{source}: not valid JSON: {exc}") from None


def _check_rulebook(name: str, rulebook: Rulebook, *, source: str) -> None:
    if name != rulebook.id:
        raise SchemaError(f"{source}: field 'rulebook': expected {rulebook.id!r} (the levels belong to it), "
                          f"got {name!r}")


def _ordinal(count: int) -> str:
    suffix = "th" if 10 <= count % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(count % 10, "th")
    return f"{count}{suffix}"


def _promotion_reason(promotion: Promotion, level: str) -> str:
    if promotion.condition is PromotionCondition.UNDER_YELLOW_CARD:
        return f"{level} while on a yellow card: {promotion.to}"
    return f"{_ordinal(promotion.count)} {promotion.level} in the tournament: {promotion.to}"
