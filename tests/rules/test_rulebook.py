"""Rulebooks: the four shipped YAML files against rules/CATALOG.md section 4, and bad files."""

from __future__ import annotations

import os
import re
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import yaml

from floorman.core.errors import ConfigError
from floorman.core.rule_ids import RuleId
from floorman.rules.params import Param, Parameters, StackRules
from floorman.rules.rulebook import SHIPPED_RULEBOOKS, Rulebook, SanctionKind, load_rulebook

# CATALOG section 4, in its order: every parameter of the table.
CATALOG_PARAMETERS = (
    "min_first_raise", "min_reraise_rule", "short_allin_min_reraise", "short_allin_reopen",
    "reopen_by_accumulation_threshold", "allin_below_bb_preflop", "allin_below_bb_postflop", "fifty_pct_base",
    "under_50_silent", "declared_under_raise", "multi_chip_rule", "single_chip_facing_bet",
    "single_chip_postflop_open", "single_chip_declared_raise_no_amount", "string_bet_effect", "correction_deadline",
    "after_correction_others", "pot_limit_miscount", "out_of_turn_binding", "skipped_after_three_actions",
    "verbal_vs_act", "odd_chip_anchor", "chip_race_start", "chip_race_rounding", "chip_race_suit_order",
    "rabbit_hunting", "hole_card_position", "outside_chips_sanction", "stack_rules", "splash_sanction",
    "next_hand_start", "showdown_showing", "winner_by_fold_show", "clock", "phone_kills_hand", "sanction_ladder",
)

# (rulebook, parameter, value, source, rule numbers cited) as CATALOG section 4 gives them. "n/s" is
# not_in_seeds, "—" is silent; both are configured defaults. stack_rules lists the requirements that are on.
EXPECTED = [
    ("tda2024", "min_first_raise", "increment_at_least_bet", "stated", ("TDA 52-A",)),
    ("club_000", "min_first_raise", "double_bet", "stated", ("9-8",)),
    ("club_004", "min_first_raise", "increment_at_least_bet_and_big_blind", "stated", ("9-8",)),
    ("ggc", "min_first_raise", "double_bet", "stated", ("8-8",)),
    ("tda2024", "min_reraise_rule", "previous_total_plus_increment", "stated", ("TDA 45 ex. 2",)),
    ("club_000", "min_reraise_rule", "previous_total_plus_increment", "stated", ("9-8",)),
    ("club_004", "min_reraise_rule", "previous_total_plus_increment", "stated", ("9-8",)),
    ("ggc", "min_reraise_rule", "double_previous_total", "reading", ("8-8",)),
    ("tda2024", "short_allin_min_reraise", "allin_plus_last_full_raise", "not_in_seeds", ()),
    ("club_000", "short_allin_min_reraise", "allin_plus_original_increment", "stated", ("9-13",)),
    ("club_004", "short_allin_min_reraise", "allin_plus_max_big_blind_original_increment", "stated", ("9-13",)),
    ("ggc", "short_allin_min_reraise", "double_allin", "reading", ("8-9",)),
    ("tda2024", "short_allin_reopen", "full_raise_only", "not_in_seeds", ()),
    ("club_000", "short_allin_reopen", "not_for_players_placed_before", "stated", ("9-13",)),
    ("club_004", "short_allin_reopen", "not_for_players_who_bet", "stated", ("9-13",)),
    ("ggc", "short_allin_reopen", "full_raise_only", "silent", ()),
    ("tda2024", "reopen_by_accumulation_threshold", "full_raise", "not_in_seeds", ()),
    ("club_000", "reopen_by_accumulation_threshold", "own_bet_doubled", "stated", ("9-13",)),
    ("club_004", "reopen_by_accumulation_threshold", "own_bet_doubled", "stated", ("9-13",)),
    ("ggc", "reopen_by_accumulation_threshold", "full_raise", "silent", ()),
    ("tda2024", "allin_below_bb_preflop", "call_big_blind_raise_to_double_big_blind", "not_in_seeds", ()),
    ("club_000", "allin_below_bb_preflop", "call_big_blind_raise_to_double_big_blind", "reading", ("9-6",)),
    ("club_004", "allin_below_bb_preflop", "call_big_blind_raise_to_double_big_blind", "reading", ("9-6",)),
    ("ggc", "allin_below_bb_preflop", "call_big_blind_raise_to_double_big_blind", "reading", ("8-6",)),
    ("tda2024", "allin_below_bb_postflop", "call_allin_raise_by_big_blind", "not_in_seeds", ()),
    ("club_000", "allin_below_bb_postflop", "call_allin_raise_by_big_blind", "stated", ("9-7",)),
    ("club_004", "allin_below_bb_postflop", "call_allin_raise_by_big_blind", "stated", ("9-7",)),
    ("ggc", "allin_below_bb_postflop", "call_allin_raise_by_big_blind", "stated", ("8-7",)),
    ("tda2024", "fifty_pct_base", "min_raise_increment", "stated", ("TDA 45 ex. 2",)),
    ("club_000", "fifty_pct_base", "min_raise_increment", "reading", ("9-9",)),
    ("club_004", "fifty_pct_base", "min_raise_increment", "reading", ("9-9",)),
    ("ggc", "fifty_pct_base", "min_raise_increment", "reading", ("8-10",)),
    ("tda2024", "under_50_silent", "call_return_surplus", "stated", ("TDA 45 ex. 3",)),
    ("club_000", "under_50_silent", "director_asks_call_or_min_raise", "stated", ("9-9",)),
    ("club_004", "under_50_silent", "call_return_surplus", "stated", ("9-9",)),
    ("ggc", "under_50_silent", "call_return_surplus", "stated", ("8-10",)),
    ("tda2024", "declared_under_raise", "complete_to_minimum", "not_in_seeds", ()),
    ("club_000", "declared_under_raise", "complete_to_minimum", "stated", ("9-9",)),
    ("club_004", "declared_under_raise", "complete_to_minimum", "stated", ("9-9",)),
    ("ggc", "declared_under_raise", "complete_to_minimum", "reading", ("8-2", "8-3")),
    ("tda2024", "multi_chip_rule", "remove_one_lowest_chip", "stated", ("TDA 45 A", "TDA 45 B", "TDA 45 B.2")),
    ("club_000", "multi_chip_rule", "none", "silent", ()),
    ("club_004", "multi_chip_rule", "none", "silent", ()),
    ("ggc", "multi_chip_rule", "none", "silent", ()),
    ("tda2024", "single_chip_facing_bet", "call", "not_in_seeds", ()),
    ("club_000", "single_chip_facing_bet", "call", "stated", ("9-17",)),
    ("club_004", "single_chip_facing_bet", "call", "stated", ("9-18",)),
    ("ggc", "single_chip_facing_bet", "none", "silent", ()),
    ("tda2024", "single_chip_postflop_open", "bet_chip_value", "not_in_seeds", ()),
    ("club_000", "single_chip_postflop_open", "bet_chip_value", "stated", ("9-17",)),
    ("club_004", "single_chip_postflop_open", "bet_chip_value", "stated", ("9-18",)),
    ("ggc", "single_chip_postflop_open", "bet_chip_value", "silent", ()),
    ("tda2024", "single_chip_declared_raise_no_amount", "raise_to_chip_value", "not_in_seeds", ()),
    ("club_000", "single_chip_declared_raise_no_amount", "unspecified", "silent", ()),
    ("club_004", "single_chip_declared_raise_no_amount", "raise_to_chip_value", "reading", ("9-18",)),
    ("ggc", "single_chip_declared_raise_no_amount", "unspecified", "silent", ()),
    ("tda2024", "string_bet_effect", "flag_only", "not_in_seeds", ()),
    ("club_000", "string_bet_effect", "flag_only", "reading", ("9-16",)),
    ("club_004", "string_bet_effect", "first_step_only", "stated", ("9-17",)),
    ("ggc", "string_bet_effect", "flag_only", "reading", ("8-16",)),
    ("tda2024", "correction_deadline", "next_card", "stated", ("TDA 52-A",)),
    ("club_000", "correction_deadline", "chips_gathered", "stated", ("9-10",)),
    ("club_004", "correction_deadline", "chips_gathered", "stated", ("9-11",)),
    ("ggc", "correction_deadline", "chips_gathered", "stated", ("8-11",)),
    ("tda2024", "after_correction_others", "callers_raised_to_corrected_amount", "stated", ("TDA 52-A",)),
    ("club_000", "after_correction_others", "later_bets_replayed", "stated", ("9-10",)),
    ("club_004", "after_correction_others", "later_players_may_change", "stated", ("9-11",)),
    ("ggc", "after_correction_others", "later_bets_replayed", "stated", ("8-11",)),
    ("tda2024", "pot_limit_miscount", "reduce_if_over_complete_if_under_before_substantial_action", "stated",
     ("TDA 52-B", "TDA 52-B ex. 1", "TDA 52-B ex. 2", "TDA 52-B ex. 3")),
    ("club_000", "pot_limit_miscount", "unspecified", "silent", ()),
    ("club_004", "pot_limit_miscount", "unspecified", "silent", ()),
    ("ggc", "pot_limit_miscount", "unspecified", "silent", ()),
    ("tda2024", "out_of_turn_binding", "unspecified", "not_in_seeds", ()),
    ("club_000", "out_of_turn_binding", "binds_unless_chips_added", "stated", ("9-14",)),
    ("club_004", "out_of_turn_binding", "binds_unless_bet_or_raise", "stated", ("9-14",)),
    ("ggc", "out_of_turn_binding", "loses_right_to_raise", "stated", ("8-14",)),
    ("tda2024", "skipped_after_three_actions", "unspecified", "not_in_seeds", ()),
    ("club_000", "skipped_after_three_actions", "loses_bet_right_or_dead_hand", "stated", ("9-15",)),
    ("club_004", "skipped_after_three_actions", "loses_bet_right_or_dead_hand", "stated", ("9-15",)),
    ("ggc", "skipped_after_three_actions", "unspecified", "silent", ()),
    ("tda2024", "verbal_vs_act", "unspecified", "not_in_seeds", ()),
    ("club_000", "verbal_vs_act", "verbal_binds", "stated", ("9-2",)),
    ("club_004", "verbal_vs_act", "verbal_binds_acts_judged_without_dealer", "stated", ("9-2",)),
    ("ggc", "verbal_vs_act", "verbal_prevails", "stated", ("8-2",)),
    ("tda2024", "odd_chip_anchor", "unspecified", "not_in_seeds", ()),
    ("club_000", "odd_chip_anchor", "first_after_dealer", "stated", ("10-8",)),
    ("club_004", "odd_chip_anchor", "unspecified", "silent", ()),
    ("ggc", "odd_chip_anchor", "left_of_button", "stated", ("9-9",)),
    ("tda2024", "chip_race_start", "unspecified", "not_in_seeds", ()),
    ("club_000", "chip_race_start", "button_or_dealer", "stated", ("12-1",)),
    ("club_004", "chip_race_start", "unspecified", "silent", ()),
    ("ggc", "chip_race_start", "left_of_button", "stated", ("12-1",)),
    ("tda2024", "chip_race_rounding", "unspecified", "not_in_seeds", ()),
    ("club_000", "chip_race_rounding", "round_up", "stated", ("12-5",)),
    ("club_004", "chip_race_rounding", "unspecified", "silent", ()),
    ("ggc", "chip_race_rounding", "nearest_median_to_players", "stated", ("12-5",)),
    ("tda2024", "chip_race_suit_order", "unspecified", "not_in_seeds", ()),
    ("club_000", "chip_race_suit_order", "spades_hearts_diamonds_clubs", "stated", ("12-3",)),
    ("club_004", "chip_race_suit_order", "unspecified", "silent", ()),
    ("ggc", "chip_race_suit_order", "spades_hearts_diamonds_clubs", "stated", ("12-3",)),
    ("tda2024", "rabbit_hunting", "unspecified", "not_in_seeds", ()),
    ("club_000", "rabbit_hunting", "forbidden", "stated", ("14-3",)),
    ("club_004", "rabbit_hunting", "unspecified", "silent", ()),
    ("ggc", "rabbit_hunting", "forbidden_unless_all_agree", "stated", ("14-3",)),
    ("tda2024", "hole_card_position", "unspecified", "not_in_seeds", ()),
    ("club_000", "hole_card_position", "above_table_visible", "stated", ("13-1",)),
    ("club_004", "hole_card_position", "unspecified", "silent", ()),
    ("ggc", "hole_card_position", "on_table_visible_in_front_of_stack", "stated", ("13-1",)),
    ("tda2024", "outside_chips_sanction", "unspecified", "not_in_seeds", ()),
    ("club_000", "outside_chips_sanction", "chips_removed_and_avertissement", "stated", ("13-3",)),
    ("club_004", "outside_chips_sanction", "unspecified", "silent", ()),
    ("ggc", "outside_chips_sanction", "chips_removed_and_faute_lourde_or_grave", "stated", ("13-4",)),
    ("tda2024", "stack_rules", (), "not_in_seeds", ()),
    ("club_000", "stack_rules", ("no_hidden_chips", "no_loose_piles", "racks_only_when_moving"), "stated", ("13-2",)),
    ("club_004", "stack_rules", (), "silent", ()),
    ("ggc", "stack_rules", ("no_hidden_chips", "no_loose_piles", "no_mixed_piles", "count_on_request"), "stated",
     ("13-2", "13-3")),
    ("tda2024", "splash_sanction", "unspecified", "not_in_seeds", ()),
    ("club_000", "splash_sanction", "avertissements", "stated", ("9-12",)),
    ("club_004", "splash_sanction", "sanctions", "stated", ("9-12",)),
    ("ggc", "splash_sanction", "avertissements", "stated", ("8-13",)),
    ("tda2024", "next_hand_start", "unspecified", "not_in_seeds", ()),
    ("club_000", "next_hand_start", "shuffle", "stated", ("11-1",)),
    ("club_004", "next_hand_start", "unspecified", "silent", ()),
    ("ggc", "next_hand_start", "blinds", "reading", ("11-1", "7-4")),
    ("tda2024", "showdown_showing", "unspecified", "not_in_seeds", ()),
    ("club_000", "showdown_showing", "all_must_show", "stated", ("10-1",)),
    ("club_004", "showdown_showing", "unspecified", "silent", ()),
    ("ggc", "showdown_showing", "last_raiser_first_clockwise_losers_may_muck", "stated", ("9-1",)),
    ("tda2024", "winner_by_fold_show", "unspecified", "not_in_seeds", ()),
    ("club_000", "winner_by_fold_show", "if_shown_to_one_show_all", "stated", ("10-5",)),
    ("club_004", "winner_by_fold_show", "unspecified", "silent", ()),
    ("ggc", "winner_by_fold_show", "none_part_or_all_to_all", "stated", ("9-8",)),
    ("tda2024", "clock", None, "not_in_seeds", ()),
    ("club_000", "clock", None, "silent", ()),
    ("club_004", "clock", None, "silent", ()),
    ("ggc", "clock", {"min_wait_s": 60, "clock_s": 60, "countdown_s": 10}, "stated", ("5-6",)),
    ("tda2024", "phone_kills_hand", False, "not_in_seeds", ()),
    ("club_000", "phone_kills_hand", False, "silent", ()),
    ("club_004", "phone_kills_hand", False, "silent", ()),
    ("ggc", "phone_kills_hand", True, "stated", ("5-5",)),
    ("tda2024", "sanction_ladder", "configured_default", "not_in_seeds", ()),
    ("club_000", "sanction_ladder", "warning_warning_fine_exclusion", "stated", ("15-1",)),
    ("club_004", "sanction_ladder", "configured_default", "silent", ()),
    ("ggc", "sanction_ladder", "ggc_five_levels", "stated",
     ("sanctions erreur de jeu", "sanctions faute", "sanctions faute lourde")),
]

SEEDS_DIR = Path(os.environ.get("FLOORMAN_SEEDS", Path(__file__).resolve().parents[3] / "shared" / "seeds"))


def _value(param: Param[Any]) -> object:
    value = param.value
    if isinstance(value, StackRules):
        return tuple(name for name, on in value.model_dump().items() if on)
    if value is None or isinstance(value, bool):
        return value
    if hasattr(value, "model_dump"):
        return value.model_dump()
    return str(value)


@pytest.mark.parametrize("name", SHIPPED_RULEBOOKS)
def test_shipped_rulebook_loads(name: str) -> None:
    book = load_rulebook(name)
    assert book.id == name
    assert book.enabled_rules()
    assert all(rule.citations for rule in book.rules)


def test_schema_has_every_catalog_section_4_parameter() -> None:
    assert tuple(Parameters.model_fields) == CATALOG_PARAMETERS


def test_expected_table_covers_every_parameter_of_every_rulebook() -> None:
    assert {(book, name) for book, name, *_ in EXPECTED} == {
        (book, name) for book in SHIPPED_RULEBOOKS for name in CATALOG_PARAMETERS}


@pytest.mark.parametrize(("book", "name", "value", "source", "rules"), EXPECTED,
                         ids=[f"{row[0]}-{row[1]}" for row in EXPECTED])
def test_parameter_matches_catalog_section_4(book: str, name: str, value: object, source: str,
                                             rules: tuple[str, ...]) -> None:
    rulebook = load_rulebook(book)
    param = getattr(rulebook.parameters, name)
    assert _value(param) == value
    assert param.source.value == source
    assert tuple(ref.split(" ", 1)[1] for ref in param.cite) == rules
    assert all(ref.split(" ", 1)[0] in rulebook.seeds for ref in param.cite)


def _normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.mark.skipif(not SEEDS_DIR.is_dir(), reason="seed texts not available (set FLOORMAN_SEEDS)")
@pytest.mark.parametrize("name", SHIPPED_RULEBOOKS)
def test_every_quote_is_the_seed_text(name: str) -> None:
    book = load_rulebook(name)
    seeds = {path.name[:3]: _normalise(path.read_text(encoding="utf-8")) for path in SEEDS_DIR.glob("*.txt")}
    for ref, text in book.quotes().items():
        assert _normalise(text) in seeds[ref.split(" ", 1)[0]], ref


def test_citation_of_004_9_17_quotes_the_first_step_rule() -> None:
    citation = load_rulebook("club_004").citation("004 9-17")
    assert (citation.rulebook, citation.seed, citation.rule) == ("club_004", "004", "9-17")
    assert "seule la première étape de la mise sera considérée" in citation.text_fr


def test_citation_not_quoted_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="does not quote '003 99-1'"):
        load_rulebook("ggc").citation("003 99-1")


@pytest.mark.parametrize("name", ["club_000", "club_004", "ggc"])
def test_verbal_declarations_a12_are_off_for_cameras(name: str) -> None:
    rule = load_rulebook(name).rule(RuleId.VERBAL_DECLARATION)
    assert rule is not None
    assert not rule.enabled


def test_outside_chips_ggc_13_4_is_faute_lourde_or_grave() -> None:
    rule = load_rulebook("ggc").rule(RuleId.CHIPS_FROM_OUTSIDE)
    assert rule is not None
    assert rule.sanction.kind is SanctionKind.LADDER
    assert rule.sanction.levels == ("faute_lourde", "faute_grave")


def test_rabbit_hunting_000_14_3_is_avertissement_and_ggc_14_3_is_level_td() -> None:
    club = load_rulebook("club_000").rule(RuleId.RABBIT_HUNTING)
    ggc = load_rulebook("ggc").rule(RuleId.RABBIT_HUNTING)
    assert club is not None and ggc is not None
    assert club.sanction.levels == ("avertissement",)
    assert ggc.sanction.kind is SanctionKind.DIRECTOR


def test_tda_turns_on_only_rules_its_seeds_contain() -> None:
    assert load_rulebook("tda2024").enabled_rules() == (
        RuleId.MIN_RAISE, RuleId.UNDER_RAISE, RuleId.MULTIPLE_CHIP_BET, RuleId.CORRECTION_WINDOW,
        RuleId.POT_LIMIT_MISCOUNT, RuleId.UNDER_CALL)


# ---------------------------------------------------------------------------------------------- bad files

def _shipped(name: str) -> dict[str, Any]:
    text = resources.files("floorman.rules").joinpath(f"rulebooks/{name}.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    assert isinstance(data, dict)
    return data


def _extra_field(data: dict[str, Any]) -> None:
    data["colour"] = "red"


def _bad_enum(data: dict[str, Any]) -> None:
    data["parameters"]["min_first_raise"]["value"] = "triple"


def _missing_parameter(data: dict[str, Any]) -> None:
    del data["parameters"]["clock"]


def _stated_without_cite(data: dict[str, Any]) -> None:
    del data["parameters"]["string_bet_effect"]["cite"]


def _cite_not_quoted(data: dict[str, Any]) -> None:
    data["parameters"]["string_bet_effect"]["cite"] = ["004 9-99"]


def _unknown_rule_id(data: dict[str, Any]) -> None:
    data["rules"][0]["id"] = "Z9"


def _unknown_ladder_level(data: dict[str, Any]) -> None:
    data["sanctions"]["repeats"][0]["sequence"] = ["avertissement", "pilori"]


def _rule_sanction_unknown_level(data: dict[str, Any]) -> None:
    data["rules"][0]["sanction"] = {"kind": "ladder", "levels": ["pilori"]}


def _bad_citation_ref(data: dict[str, Any]) -> None:
    data["rules"][1]["citations"][0]["ref"] = "rule 9-6"


def _duplicate_rule(data: dict[str, Any]) -> None:
    data["rules"].append(data["rules"][0])


@pytest.mark.parametrize(("mutate", "field", "message"), [
    (_extra_field, "colour", "unknown field"),
    (_bad_enum, "parameters.min_first_raise.value", "Input should be"),
    (_missing_parameter, "parameters.clock", "required field is missing"),
    (_stated_without_cite, "parameters.string_bet_effect", "needs a citation"),
    (_cite_not_quoted, "<root>", "parameters.string_bet_effect.cite: ['004 9-99'] not quoted"),
    (_unknown_rule_id, "rules[0].id", "unknown rule id 'Z9'"),
    (_unknown_ladder_level, "sanctions", "unknown level(s) ['pilori']"),
    (_rule_sanction_unknown_level, "<root>", "rules[A1].sanction.levels: unknown level(s) ['pilori']"),
    (_bad_citation_ref, "rules[1].citations[0].ref", "expected a reference like"),
    (_duplicate_rule, "<root>", "duplicates ['A1']"),
])
def test_bad_rulebook_names_file_and_field(tmp_path: Path, mutate: Any, field: str, message: str) -> None:
    data = _shipped("club_004")
    mutate(data)
    path = tmp_path / "club.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_rulebook(path)
    assert info.value.source == str(path)
    assert info.value.field == field
    assert message in str(info.value)
    assert str(path) in str(info.value)


def test_yaml_syntax_error_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("id: club\nrules: [\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"broken.yaml: not valid YAML at line \d+"):
        load_rulebook(path)


@pytest.mark.parametrize(("name", "message"), [
    ("tda2099", "unknown rulebook 'tda2099'"),
    ("/nonexistent/club.yaml", "file not found"),
])
def test_unknown_rulebook_is_a_config_error(name: str, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_rulebook(name)


def test_a_club_writes_its_own_rulebook(tmp_path: Path) -> None:
    data = _shipped("club_004")
    data["id"] = "my_club"
    data["parameters"]["under_50_silent"]["value"] = "director_asks_call_or_min_raise"
    path = tmp_path / "my_club.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    book = load_rulebook(str(path))
    assert isinstance(book, Rulebook)
    assert book.id == "my_club"
    assert book.parameters.under_50_silent.value == "director_asks_call_or_min_raise"
