"""Sanction ladders and the register: suggestions per rulebook, escalations, persistence without loss."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from floorman.core.errors import SchemaError
from floorman.core.rule_ids import RuleId
from floorman.rules.rulebook import load_rulebook
from floorman.rules.sanctions import SanctionEntry, SanctionRegister, SanctionSuggestion


def register(book: str) -> SanctionRegister:
    return SanctionRegister(rulebook=load_rulebook(book), tournament_id="t-2026-11")


def apply(reg: SanctionRegister, suggestion: SanctionSuggestion) -> None:
    """The director follows the suggestion."""
    assert suggestion.level is not None
    reg.record(SanctionEntry(player=suggestion.player, infraction=suggestion.infraction,
                             base_level=suggestion.base_level, suggested_level=suggestion.level,
                             level=suggestion.level))


def test_ggc_same_erreur_de_jeu_escalates_3rd_to_6th_time() -> None:
    reg = register("ggc")
    levels = []
    for _ in range(7):
        suggestion = reg.suggest(player="alice", infraction="parle avant son tour", level="erreur_de_jeu")
        levels.append(suggestion.level)
        apply(reg, suggestion)
    assert levels == ["erreur_de_jeu", "erreur_de_jeu", "faute_legere", "faute", "faute_lourde", "faute_grave",
                      "faute_grave"]


def test_ggc_different_erreurs_de_jeu_do_not_escalate() -> None:
    reg = register("ggc")
    for infraction in ("fausse donne", "stack mal rangé", "parle avant son tour"):
        suggestion = reg.suggest(player="alice", infraction=infraction, level="erreur_de_jeu")
        assert suggestion.level == "erreur_de_jeu"
        apply(reg, suggestion)


def test_ggc_second_faute_in_tournament_is_faute_lourde() -> None:
    reg = register("ggc")
    apply(reg, reg.suggest(player="bob", infraction=RuleId.CARDS_SPEAK))
    second = reg.suggest(player="bob", infraction="insulte légère", level="faute")
    assert (second.base_level, second.level, second.yellow_card) == ("faute", "faute_lourde", True)
    assert any("2nd faute" in reason for reason in second.reasons)
    assert any(c.rule == "sanctions faute" for c in second.citations)
    assert reg.suggest(player="carol", infraction="insulte légère", level="faute").level == "faute"


def test_ggc_faute_on_a_yellow_card_is_faute_grave() -> None:
    reg = register("ggc")
    apply(reg, reg.suggest(player="dan", infraction="geste violent", level="faute_lourde"))
    suggestion = reg.suggest(player="dan", infraction="refuse la poignée de main", level="faute")
    assert (suggestion.level, suggestion.ends_tournament) == ("faute_grave", True)
    assert any("yellow card" in reason for reason in suggestion.reasons)


def test_ggc_faute_legere_repeat_is_faute() -> None:
    reg = register("ggc")
    apply(reg, reg.suggest(player="eve", infraction=RuleId.CLOCK))
    assert reg.suggest(player="eve", infraction="jure", level="faute_legere").level == "faute"


def test_ggc_outside_chips_13_4_suggests_faute_lourde_or_grave() -> None:
    suggestion = register("ggc").suggest(player="fay", infraction=RuleId.CHIPS_FROM_OUTSIDE)
    assert (suggestion.level, suggestion.alternatives) == ("faute_lourde", ("faute_grave",))
    assert any(c.rule == "13-4" for c in suggestion.citations)


@pytest.mark.parametrize(("book", "rule_id", "reason"), [
    ("ggc", RuleId.RABBIT_HUNTING, "level TD"),
    ("ggc", RuleId.STRING_BET, "level TD"),
    ("club_000", RuleId.MIN_RAISE, "no sanction"),
])
def test_rules_without_a_level_suggest_none(book: str, rule_id: RuleId, reason: str) -> None:
    suggestion = register(book).suggest(player="gus", infraction=rule_id)
    assert suggestion.level is None
    assert any(reason in r for r in suggestion.reasons)


def test_club_000_15_1_warning_then_fine_of_one_big_blind_then_exclusion() -> None:
    reg = register("club_000")
    got = []
    for _ in range(4):
        suggestion = reg.suggest(player="hal", infraction=RuleId.RABBIT_HUNTING, big_blind=400)
        got.append((suggestion.level, suggestion.fine, suggestion.ends_tournament))
        apply(reg, suggestion)
    assert got == [("avertissement", None, False), ("avertissement_amende", 400, False), ("exclusion", None, True),
                   ("exclusion", None, True)]


def test_club_000_15_1_counts_the_same_fault_only() -> None:
    reg = register("club_000")
    apply(reg, reg.suggest(player="ivy", infraction=RuleId.RABBIT_HUNTING))
    assert reg.suggest(player="ivy", infraction=RuleId.SPLASHING_POT).level == "avertissement"
    assert reg.suggest(player="jon", infraction=RuleId.RABBIT_HUNTING).level == "avertissement"


def test_club_000_fine_without_big_blind_says_so() -> None:
    reg = register("club_000")
    apply(reg, reg.suggest(player="kim", infraction=RuleId.CHIPS_FROM_OUTSIDE))
    suggestion = reg.suggest(player="kim", infraction=RuleId.CHIPS_FROM_OUTSIDE)
    assert suggestion.fine is None
    assert any("big blind is unknown" in r for r in suggestion.reasons)


@pytest.mark.parametrize(("book", "says"), [("club_004", "configured default"), ("tda2024", "not in the seeds")])
def test_default_ladders_say_they_are_configured(book: str, says: str) -> None:
    reg = register(book)
    levels = []
    for _ in range(3):
        suggestion = reg.suggest(player="lea", infraction="splash", level="avertissement")
        assert any(says in reason for reason in suggestion.reasons)
        levels.append(suggestion.level)
        apply(reg, suggestion)
    assert levels == ["avertissement", "penalite", "exclusion"]


def test_suggest_never_applies() -> None:
    reg = register("ggc")
    suggestion = reg.suggest(player="max", infraction=RuleId.CHIPS_FROM_OUTSIDE)
    assert suggestion.applied is False
    assert reg.entries == ()


@pytest.mark.parametrize(("infraction", "level", "message"), [
    ("x", "faute_tres_lourde", "unknown sanction level 'faute_tres_lourde'"),
    ("free text", None, "level: expected a level for infraction 'free text'"),
])
def test_suggest_bad_arguments(infraction: str, level: str | None, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        register("ggc").suggest(player="ned", infraction=infraction, level=level)


def test_record_bad_level_keeps_the_entries() -> None:
    reg = register("ggc")
    apply(reg, reg.suggest(player="oli", infraction=RuleId.CHIPS_FROM_OUTSIDE))
    with pytest.raises(ValueError, match="level: unknown sanction level 'avertissement'"):
        reg.record(SanctionEntry(player="oli", infraction="D2", level="avertissement"))
    assert len(reg.entries) == 1


def test_register_round_trips_through_a_file(tmp_path: Path) -> None:
    reg = register("ggc")
    apply(reg, reg.suggest(player="pam", infraction=RuleId.CHIPS_FROM_OUTSIDE))
    apply(reg, reg.suggest(player="pam", infraction="insulte", level="faute"))
    path = tmp_path / "register.json"
    reg.save(path)
    loaded = SanctionRegister.load(path, rulebook=load_rulebook("ggc"))
    assert loaded.entries == reg.entries
    assert loaded.tournament_id == "t-2026-11"
    assert loaded.suggest(player="pam", infraction="x", level="faute").level == "faute_grave"
    assert [p.name for p in tmp_path.iterdir()] == ["register.json"]


def _file_with_a_bad_entry(tmp_path: Path) -> Path:
    reg = register("ggc")
    for player in ("quin", "rae"):
        apply(reg, reg.suggest(player=player, infraction=RuleId.CHIPS_FROM_OUTSIDE))
    data = json.loads(reg.to_json())
    data["entries"].insert(1, {"player": "sam", "infraction": "D2", "level": "carton_violet"})
    path = tmp_path / "register.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_strict_load_names_file_and_field_and_leaves_the_file(tmp_path: Path) -> None:
    path = _file_with_a_bad_entry(tmp_path)
    before = path.read_text(encoding="utf-8")
    with pytest.raises(SchemaError, match=r"register\.json: field 'entries\[1\]\.level': unknown sanction level"):
        SanctionRegister.load(path, rulebook=load_rulebook("ggc"))
    assert path.read_text(encoding="utf-8") == before


def test_lenient_load_keeps_every_valid_entry(tmp_path: Path) -> None:
    path = _file_with_a_bad_entry(tmp_path)
    reg, rejected = SanctionRegister.load_lenient(path, rulebook=load_rulebook("ggc"))
    assert [entry.player for entry in reg.entries] == ["quin", "rae"]
    assert len(rejected) == 1 and rejected[0].startswith("entries[1].level")


@pytest.mark.parametrize(("content", "message"), [
    ("{oops", "not valid JSON"),
    ('{"rulebook": "club_000", "tournament_id": "t", "entries": []}', "field 'rulebook': expected 'ggc'"),
    ('{"rulebook": "ggc", "tournament_id": "t", "entries": [{"player": ""}]}', "field 'entries[0].player'"),
])
def test_bad_register_file_is_a_schema_error(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "register.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(SchemaError, match=message.replace("[", r"\[").replace("]", r"\]")):
        SanctionRegister.load(path, rulebook=load_rulebook("ggc"))
