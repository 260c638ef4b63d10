"""What machine a benchmark ran on: printed with every table and stored in every JSON line."""

from __future__ import annotations

import os
import platform
from typing import Any


def machine() -> dict[str, Any]:
    return {
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "processor": platform.processor() or platform.machine(),
    }
