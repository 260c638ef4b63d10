"""Where the shared folder (site mirror + kpi scripts) lives. Read at run time, never copied."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def shared_dir(override: str | Path | None = None) -> Path:
    """--shared PATH, else $IMQ_SHARED, else ../shared next to the repository."""
    chosen = override or os.environ.get("IMQ_SHARED") or Path(__file__).resolve().parents[2] / "shared"
    path = Path(chosen).resolve()
    if not (path / "kpi" / "evaluate.py").is_file() or not (path / "site").is_dir():
        raise SystemExit(
            f"benchmarks: {path} has no kpi/evaluate.py or site/; "
            "pass --shared PATH or set IMQ_SHARED to the shared folder"
        )
    return path


def site_dir(shared: Path) -> Path:
    return shared / "site"


def kpi_dir(shared: Path) -> Path:
    return shared / "kpi"
