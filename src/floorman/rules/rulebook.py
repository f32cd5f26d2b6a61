"""Rulebooks as data: which checks are on, the parameters where clubs disagree, citations and sanctions.

A rulebook is one YAML file (`rulebooks/<id>.yaml` for the shipped ones: tda2024, ggc, club_000, club_004,
or any path a club writes). Load it with `load_rulebook("ggc")` or `load_rulebook("path/to/club.yaml")`;
errors are `ConfigError`s naming the file and the field.
"""

from __future__ import annotations

import enum
import functools
import logging
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from types import MappingProxyType

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from floorman.core.alerts import Citation, Severity
from floorman.core.config import model_from_yaml_file, model_from_yaml_text
from floorman.core.errors import ConfigError
from floorman.core.rule_ids import RuleId
from floorman.rules.params import CITE_PATTERN, Parameters, Source

logger = logging.getLogger(__name__)

SHIPPED_RULEBOOKS: tuple[str, ...] = ("tda2024", "ggc", "club_000", "club_004")


class Quote(BaseModel):
    """A rule as written in the seed: the reference and its French text."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ref: str = Field(description="'<seed> <rule>', e.g. '004 9-17' or '001 TDA 45 ex. 2'.")
    text_fr: str = Field(min_length=1, description="The rule's French text, quoted from the seed.")

    @field_validator("ref")
    @classmethod
    def _check_ref(cls, value: str) -> str:
        if not CITE_PATTERN.match(value):
            raise ValueError(f"expected a reference like '000 9-8', got {value!r}")
        return value

    @property
    def seed(self) -> str:
        return self.ref.split(" ", 1)[0]

    @property
    def rule(self) -> str:
        return self.ref.split(" ", 1)[1]


class SanctionKind(enum.StrEnum):
    NONE = "none"
    """No sanction: the rule's own remedy (correction, dead hand) only."""
    LADDER = "ladder"
    """A level of the rulebook's ladder (several levels: the director picks among them)."""
    DIRECTOR = "director"
    """Forbidden but no level stated: the director decides ("level: TD")."""


class RuleSanction(BaseModel):
    """The sanction attached to a rule."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: SanctionKind = Field(description="none, ladder (a level of the ladder) or director (level: TD).")
    levels: tuple[str, ...] = Field(default=(), description="Ladder level ids the rule names (kind ladder).")
    remedy_en: str = Field(default="", description="The rule's own remedy, in English (dead hand, correction).")

    @model_validator(mode="after")
    def _check_levels(self) -> RuleSanction:
        if self.kind is SanctionKind.LADDER and not self.levels:
            raise ValueError("a 'ladder' sanction needs at least one level in 'levels'")
        if self.kind is not SanctionKind.LADDER and self.levels:
            raise ValueError(f"'levels' is only for kind 'ladder', got kind {self.kind.value!r}")
        return self


class RuleEntry(BaseModel):
    """One catalog topic as this rulebook words it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: RuleId = Field(description="Catalog id (A1..H1).")
    enabled: bool = Field(description="Whether the check is on.")
    severity: Severity = Field(default=Severity.WARNING, description="info, warning or alert.")
    citations: tuple[Quote, ...] = Field(min_length=1, description="The seed rules, with their French text.")
    summary_en: str = Field(min_length=1, description="What the rule says, in English.")
    sanction: RuleSanction = Field(description="The sanction attached.")

    @field_validator("id", mode="before")
    @classmethod
    def _parse_id(cls, value: object) -> object:
        return RuleId.parse(value) if isinstance(value, str) else value


class SanctionLevel(BaseModel):
    """One rung of a sanction ladder."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9_]+$", description="Level id, e.g. 'faute_lourde'.")
    name_fr: str = Field(min_length=1, description="Name in French.")
    name_en: str = Field(min_length=1, description="Name in English.")
    sanction_fr: str = Field(min_length=1, description="What it entails, in French (quoted where the seed says).")
    sanction_en: str = Field(min_length=1, description="What it entails, in English.")
    fine_big_blinds: int = Field(default=0, ge=0, description="Fine in big blinds of the current level.")
    yellow_card: bool = Field(default=False, description="Whether it gives a yellow card.")
    ends_tournament: bool = Field(default=False, description="Exclusion: the player's tournament ends.")


class RepeatRule(BaseModel):
    """The nth repeat of an infraction at level `level` is suggested at sequence[n-1] (the last one after)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    level: str = Field(description="Level of the infraction this rule escalates.")
    same_infraction: bool = Field(description="Count only the same infraction (true) or any at this level.")
    sequence: tuple[str, ...] = Field(min_length=1, description="Level for the 1st, 2nd, ... occurrence.")
    cite: tuple[str, ...] = Field(default=(), description="Rule references.")


class PromotionCondition(enum.StrEnum):
    REPEAT_IN_TOURNAMENT = "repeat_in_tournament"
    """The player already had `count - 1` entries at `level` in this tournament."""
    UNDER_YELLOW_CARD = "under_yellow_card"
    """The player holds a yellow card in this tournament."""


class Promotion(BaseModel):
    """A level raised to another under a condition (GGC: 2nd faute → faute lourde)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    condition: PromotionCondition = Field(description="repeat_in_tournament or under_yellow_card.")
    level: str = Field(description="The lowest level the promotion applies to.")
    only_that_level: bool = Field(default=True, description="Apply to `level` only (true) or to it and above.")
    count: int = Field(default=2, ge=2, description="For repeat_in_tournament: the occurrence that is promoted.")
    to: str = Field(description="The level it becomes.")
    cite: tuple[str, ...] = Field(default=(), description="Rule references.")


class SanctionLadder(BaseModel):
    """A rulebook's sanctions: ordered levels and how they escalate. Suggested, never applied."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: Source = Field(description="stated, reading, not_in_seeds or silent (a configured default).")
    cite: tuple[str, ...] = Field(default=(), description="Rule references.")
    note: str = Field(default="", description="Why, when the ladder is a configured default.")
    levels: tuple[SanctionLevel, ...] = Field(min_length=1, description="Levels, from the mildest.")
    repeats: tuple[RepeatRule, ...] = Field(default=(), description="Escalation by repetition.")
    promotions: tuple[Promotion, ...] = Field(default=(), description="Escalation by condition.")

    @model_validator(mode="after")
    def _check_levels(self) -> SanctionLadder:
        ids = [level.id for level in self.levels]
        if len(set(ids)) != len(ids):
            raise ValueError(f"levels: each id must appear once, got {ids}")
        if self.source in (Source.NOT_IN_SEEDS, Source.SILENT) and not self.note:
            raise ValueError(f"a {self.source.value} ladder needs a 'note' saying it is a configured default")
        named = [r.level for r in self.repeats] + [s for r in self.repeats for s in r.sequence]
        named += [p.level for p in self.promotions] + [p.to for p in self.promotions]
        unknown = sorted({n for n in named if n not in ids})
        if unknown:
            raise ValueError(f"unknown level(s) {unknown} in repeats/promotions, expected one of {ids}")
        return self

    def rank(self, level: str) -> int:
        """Position of a level (0 = mildest); ValueError for an unknown level."""
        index = self._ranks.get(level)
        if index is not None:
            return index
        raise ValueError(f"unknown sanction level {level!r}, expected one of {[x.id for x in self.levels]}")

    def level(self, level: str) -> SanctionLevel:
        return self.levels[self.rank(level)]

    @functools.cached_property
    def _ranks(self) -> Mapping[str, int]:
        ranks: dict[str, int] = {}
        for index, item in enumerate(self.levels):
            ranks.setdefault(item.id, index)
        return MappingProxyType(ranks)


class Rulebook(BaseModel):
    """A rulebook: the checks that are on, the parameters, the citations and the sanctions."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9_]+$", description="Rulebook id, e.g. 'ggc'.")
    title: str = Field(min_length=1, description="Human title.")
    seeds: tuple[str, ...] = Field(min_length=1, description="Seed files the rulebook quotes ('003').")
    description: str = Field(default="", description="Where the text comes from.")
    rules: tuple[RuleEntry, ...] = Field(min_length=1, description="The rules, one per catalog topic.")
    other_quotes: tuple[Quote, ...] = Field(
        default=(), description="Other quoted rules: the sanctions section, rules out of the cameras' scope.")
    parameters: Parameters = Field(description="CATALOG section 4.")
    sanctions: SanctionLadder = Field(description="The sanction ladder.")

    @model_validator(mode="after")
    def _check_references(self) -> Rulebook:
        ids = [rule.id for rule in self.rules]
        duplicates = sorted({str(i) for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"rules: each catalog id must appear once, got duplicates {duplicates}")
        quoted = self.quotes()
        for ref in quoted:
            if ref.split(" ", 1)[0] not in self.seeds:
                raise ValueError(f"rules: reference {ref!r} is not from one of the seeds {list(self.seeds)}")
        for name, refs in self.parameters.citations().items():
            missing = [ref for ref in refs if ref not in quoted]
            if missing:
                raise ValueError(f"parameters.{name}.cite: {missing} not quoted in any rule's citations")
        ladder_refs = [*self.sanctions.cite, *(c for r in self.sanctions.repeats for c in r.cite),
                       *(c for p in self.sanctions.promotions for c in p.cite)]
        missing = [ref for ref in ladder_refs if ref not in quoted]
        if missing:
            raise ValueError(f"sanctions: references {missing} not quoted in any rule's citations")
        level_ids = {level.id for level in self.sanctions.levels}
        for rule in self.rules:
            unknown = [level for level in rule.sanction.levels if level not in level_ids]
            if unknown:
                raise ValueError(f"rules[{rule.id.value}].sanction.levels: unknown level(s) {unknown}, "
                                 f"expected one of {sorted(level_ids)}")
        return self

    @functools.cached_property
    def _quote_index(self) -> Mapping[str, str]:
        quotes = {quote.ref: quote.text_fr for quote in self.other_quotes}
        quotes.update({quote.ref: quote.text_fr for rule in self.rules for quote in rule.citations})
        return MappingProxyType(quotes)

    def quotes(self) -> Mapping[str, str]:
        """Every quoted rule: reference → French text (read-only)."""
        return self._quote_index

    def rule(self, rule_id: RuleId) -> RuleEntry | None:
        return self._rule_index.get(rule_id)

    def enabled_rules(self) -> tuple[RuleId, ...]:
        return self._enabled

    @functools.cached_property
    def _rule_index(self) -> Mapping[RuleId, RuleEntry]:
        index: dict[RuleId, RuleEntry] = {}
        for rule in self.rules:
            index.setdefault(rule.id, rule)
        return MappingProxyType(index)

    @functools.cached_property
    def _enabled(self) -> tuple[RuleId, ...]:
        return tuple(rule.id for rule in self.rules if rule.enabled)

    @functools.cached_property
    def _citations(self) -> Mapping[str, Citation]:
        citations = {}
        for ref, text in self.quotes().items():
            seed, rule = ref.split(" ", 1)
            citations[ref] = Citation(rulebook=self.id, seed=seed, rule=rule, text_fr=text)
        return MappingProxyType(citations)

    def citations_of(self, refs: tuple[str, ...]) -> tuple[Citation, ...]:
        """The `Citation`s of the quoted references among `refs`, once each, in order (others left out)."""
        found = self._citation_sets.get(refs)
        if found is None:
            quotes = self._citations
            found = tuple(quotes[ref] for ref in dict.fromkeys(refs) if ref in quotes)
            if len(self._citation_sets) < 4096:
                self._citation_sets[refs] = found
        return found

    @functools.cached_property
    def _citation_sets(self) -> dict[tuple[str, ...], tuple[Citation, ...]]:
        return {}

    def citation(self, ref: str) -> Citation:
        """The `Citation` of a quoted reference; ValueError if this rulebook does not quote it."""
        citation = self._citations.get(ref)
        if citation is None:
            raise ValueError(f"rulebook {self.id!r} does not quote {ref!r}")
        return citation


def rulebook_from_yaml(text: str, *, source: str) -> Rulebook:
    return model_from_yaml_text(Rulebook, text, source=source)


@functools.lru_cache(maxsize=len(SHIPPED_RULEBOOKS))
def _load_shipped(name: str) -> Rulebook:
    text = resources.files("floorman.rules").joinpath(f"rulebooks/{name}.yaml").read_text(encoding="utf-8")
    return rulebook_from_yaml(text, source=f"floorman/rules/rulebooks/{name}.yaml")


def load_rulebook(name_or_path: str | Path) -> Rulebook:
    """A shipped rulebook by id ('ggc'), or a rulebook YAML file by path (read each time)."""
    key = str(name_or_path)
    if key in SHIPPED_RULEBOOKS:
        return _load_shipped(key)
    path = Path(key)
    if path.suffix not in (".yaml", ".yml") and not path.exists():
        raise ConfigError(f"unknown rulebook {key!r}: expected one of {list(SHIPPED_RULEBOOKS)} or a path to a "
                          "rulebook YAML file", source=key)
    book = model_from_yaml_file(Rulebook, path)
    logger.debug("loaded rulebook %s from %s", book.id, path)
    return book
