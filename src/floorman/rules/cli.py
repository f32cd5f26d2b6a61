"""`floorman ruling` (a bet ruling as JSON) and `floorman rules list|check|check-truth`.

`floorman rules --subscribe ... --publish ...` (the checker on the event bus) needs the bus, which the rules
package does not import: `floorman.serve` registers these commands through `register_commands` and adds the
service's options to the `rules` parser it returns."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from floorman.core.errors import SchemaError
from floorman.core.jsonl import read_truth
from floorman.rules.rulebook import SHIPPED_RULEBOOKS, load_rulebook
from floorman.rules.ruling_models import situation_from_json
from floorman.rules.rulings import rule_bet
from floorman.rules.truth_check import check_truth
from floorman.rules.truth_io import report_json, report_text, scenario_rulebook, truth_paths


def register_commands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Add `floorman ruling` and `floorman rules` (its subcommands); return the `rules` parser."""
    ruling = subparsers.add_parser(
        "ruling", help="rule on a push (multi-chip, 50%% rule, oversized chip, string bet, short all-in)",
        description="Read a betting situation (JSON) and print the ruling (JSON). The ruling is a pure function "
        "of the situation and the rulebook.")
    ruling.add_argument("file", metavar="FILE.json", help="the situation as JSON, or '-' for standard input")
    ruling.add_argument("--rulebook", metavar="R", default=None,
                        help=f"rulebook id ({', '.join(SHIPPED_RULEBOOKS)}) or path to a rulebook YAML; "
                        "overrides the file's \"rulebook\"")
    ruling.set_defaults(handler=run_ruling)

    rules = subparsers.add_parser(
        "rules", help="run the rules checker as a ZeroMQ service; list or check rulebooks; score truth files",
        description="With --subscribe and --publish: check the events of one table (or all) and publish alerts "
        "as [floorman/<table>/alert, JSON]. Subcommands: list, check, check-truth.")
    rules.set_defaults(handler=run_without_service)
    sub = rules.add_subparsers(dest="rules_command", metavar="SUBCOMMAND")
    listing = sub.add_parser("list", help="list the shipped rulebooks and the checks each turns on")
    listing.set_defaults(handler=run_list)
    check = sub.add_parser("check", help="validate a rulebook (id or YAML path); errors name the file and field")
    check.add_argument("rulebook", metavar="R", help="rulebook id or path")
    check.set_defaults(handler=run_check)
    truth = sub.add_parser("check-truth", help="replay a scenario's truth events through the checker and score "
                           "its alerts against the expected ones (precision, recall)")
    truth.add_argument("path", metavar="DIR_OR_TRUTH.jsonl", help="a scenario output folder or its truth.jsonl")
    truth.add_argument("--rulebook", dest="truth_rulebook", metavar="R", default=None,
                       help="rulebook id or path (default: the 'rulebook' of the scenario.yaml beside the truth)")
    truth.add_argument("--json", action="store_true", help="print the report as JSON")
    truth.set_defaults(handler=run_check_truth)
    return rules


def _read_situation(name: str) -> tuple[str, str]:
    if name == "-":
        return sys.stdin.read(), "<stdin>"
    path = Path(name)
    try:
        return path.read_text(encoding="utf-8"), str(path)
    except OSError as exc:
        raise SchemaError(f"{path}: cannot read the file: {exc.strerror or exc}") from None


def run_ruling(args: argparse.Namespace) -> int:
    text, source = _read_situation(args.file)
    situation = situation_from_json(text, source=source)
    book = load_rulebook(args.rulebook or situation.rulebook)
    ruling = rule_bet(situation=situation, rulebook=book)
    sys.stdout.write(json.dumps(ruling.model_dump(mode="json"), ensure_ascii=False, indent=2) + "\n")
    return 0


def run_list(args: argparse.Namespace) -> int:
    del args
    for name in SHIPPED_RULEBOOKS:
        book = load_rulebook(name)
        checks = " ".join(rule.value for rule in book.enabled_rules())
        sys.stdout.write(f"{book.id:10} {book.title}\n           checks: {checks}\n")
    return 0


def run_check(args: argparse.Namespace) -> int:
    book = load_rulebook(args.rulebook)
    sys.stdout.write(f"{book.id}: valid ({len(book.rules)} rules, {len(book.enabled_rules())} checks on, "
                     f"{len(book.sanctions.levels)} sanction levels)\n")
    return 0


def run_without_service(args: argparse.Namespace) -> int:
    del args
    sys.stderr.write("floorman rules: expected --subscribe, --publish and --rulebook to run the checker, or a "
                     "subcommand (list, check, check-truth)\n")
    return 2


def run_check_truth(args: argparse.Namespace) -> int:
    truth_path, spec_path = truth_paths(Path(args.path))
    records = read_truth(truth_path)
    book = load_rulebook(args.truth_rulebook or scenario_rulebook(spec_path, truth=truth_path))
    report = check_truth(records, rulebook=book)
    if args.json:
        sys.stdout.write(json.dumps(report_json(report), ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(report_text(report, source=str(truth_path)))
    return 0
