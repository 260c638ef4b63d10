"""Run the shared kpi scripts on results files and read their figures back.

The scripts are the judges, so they run as they are (a subprocess each) and their outputs are
kept next to the results files. Figures come from evaluate.py's --json where it has them and
from its printed report where it does not (mustReach), parsed leniently: a figure the report
no longer prints becomes None rather than an exception.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

MUST_REACH = re.compile(r"in the top 6\s+([\d.]+)%\s*\((\d+)/(\d+)\)")
ACCURACY = re.compile(r"accuracy \(KPI\)\s+([\d.]+)%")
CASE_LINE = re.compile(r"^\s{2}(ok|FAIL|skip)\s", re.MULTILINE)


def run_script(script: Path, args: list[str], report: Path) -> str:
    """Run a kpi script with this interpreter; keep stdout+stderr in `report`; return stdout."""
    done = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, check=False)
    stderr = f"\n--- stderr ---\n{done.stderr}" if done.stderr else ""
    report.write_text(done.stdout + stderr, encoding="utf-8")
    if done.returncode not in (0, 1):  # ranking_cases.py exits 1 when a case fails: that is a result
        raise SystemExit(
            f"benchmarks: {script.name} {' '.join(args)} exited {done.returncode}; "
            f"see {report}\n{done.stderr.strip()}"
        )
    return done.stdout


def emit_gold_queries(kpi: Path, path: Path) -> None:
    """evaluate.py's own list: the gold queries plus the seeded restraint sample."""
    run_script(kpi / "evaluate.py", ["--emit-queries", str(path)], path.with_suffix(".log"))


def emit_case_queries(kpi: Path, path: Path) -> None:
    run_script(kpi / "ranking_cases.py", ["--emit", str(path)], path.with_suffix(".log"))


def artificial_queries(kpi: Path) -> list[str]:
    data = json.loads((kpi / "artificial-queries.json").read_text(encoding="utf-8"))
    return list(dict.fromkeys([c["query"] for c in data["main"]] + [c["query"] for c in data["typos"]]))


def read_queries(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["query"] for line in lines if line.strip()]


def gold_figures(kpi: Path, results: Path, out_stem: Path, gold: Path | None = None) -> dict[str, Any]:
    """evaluate.py --json --no-gate: the dev-half headline figures, in percent.
    `gold` scores another label file (a subset, in the smoke test) instead of gold-dev.json."""
    payload = out_stem.with_suffix(".json")
    extra = ["--gold", str(gold)] if gold else []
    text = run_script(
        kpi / "evaluate.py",
        ["--results", str(results), "--json", str(payload), "--no-gate", *extra],
        out_stem.with_suffix(".txt"),
    )
    data = json.loads(payload.read_text(encoding="utf-8"))
    micro, macro, by_source = data["micro"], data["macro"], data.get("bySrc", {})
    reach = MUST_REACH.search(text)
    return {
        "micro_p1": micro["p1"],
        "macro_p1": macro["p1"],
        "mrr": micro["targetMrr"],
        "recall6": micro["top6"],
        "ndcg10": micro["ndcg"],
        "question_p1": by_source.get("question", {}).get("p1"),
        "intent_recall6": by_source.get("intent", {}).get("top6"),
        "must_reach_top6": float(reach.group(1)) if reach else None,
        "must_reach": f"{reach.group(2)}/{reach.group(3)}" if reach else None,
        "never_returned": micro["targetUnreachable"],
        "queries": micro["total"],
    }


def case_figures(kpi: Path, results: Path, out_stem: Path) -> dict[str, Any]:
    """ranking_cases.py: count its ok / FAIL / skip lines."""
    text = run_script(kpi / "ranking_cases.py", ["--results", str(results)], out_stem.with_suffix(".txt"))
    verdicts = CASE_LINE.findall(text)
    passed, failed = verdicts.count("ok"), verdicts.count("FAIL")
    return {
        "cases_passed": passed,
        "cases_failed": failed,
        "cases_skipped": verdicts.count("skip"),
        "cases_checked": passed + failed,
    }


def artificial_figures(kpi: Path, results: Path, out_stem: Path) -> dict[str, Any]:
    """evaluate.py --artificial: accuracy (KPI) micro, macro over buckets, and the typo bucket."""
    payload = out_stem.with_suffix(".json")
    text = run_script(
        kpi / "evaluate.py",
        [
            "--artificial",
            str(kpi / "artificial-queries.json"),
            "--results",
            str(results),
            "--json",
            str(payload),
        ],
        out_stem.with_suffix(".txt"),
    )
    printed = [float(x) for x in ACCURACY.findall(text)]  # micro, macro, then the typo table
    figures: dict[str, Any] = {
        "artificial_accuracy": printed[0] if printed else None,
        "artificial_macro_accuracy": printed[1] if len(printed) > 1 else None,
        "typo_accuracy": printed[2] if len(printed) > 2 else None,
    }
    if payload.exists():  # the unrounded values, when the script wrote them
        measured = json.loads(payload.read_text(encoding="utf-8")).get("sets", {}).get("artificial", {})
        for key, value in (
            ("artificial_accuracy", measured.get("summary", {}).get("accuracy")),
            ("artificial_macro_accuracy", measured.get("macro")),
            ("typo_accuracy", measured.get("typos", {}).get("accuracy")),
        ):
            if value is not None:
                figures[key] = value
    return figures
