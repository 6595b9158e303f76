"""Where results live and how the build measures, read once from the environment.

CROSSOVER_CACHE_DIR  the build host's own measurements (default: .cache/crossover)
CROSSOVER_RESULTS_DIR committed reference measurements (default: results/)
CROSSOVER_QUICK=1    tiny sizes for tests; pages then carry a visible "quick mode" banner
CROSSOVER_POINT_TIMEOUT  seconds one measured point may take (default: the experiment's own, or 300)
CROSSOVER_EXPERIMENT_BOX seconds after which an experiment starts no further round (default: none;
                         at least two rounds always run; scripts/measure-gpu sets it)
CROSSOVER_SETTLE_BUDGET  seconds a whole run may spend waiting for the machine's usual state and
                         re-measuring (default: none; each experiment's own boxes; scripts/measure-gpu sets it)
CROSSOVER_SMOKE=1     with CROSSOVER_QUICK=1: no canaries, settle waits or re-measuring (the tests' site builds;
                     tests of the Gate and canaries measure without it)
CROSSOVER_GPU_SLOT=1 measure only the experiments that fit a GPU machine's time-limited slot
                     (scripts/measure-gpu sets it; see experiments.suite)
CROSSOVER_BLOCK_TIMEOUT  seconds one page's exec blocks and markers may take to render (default 600)
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Settings:
    cache_dir: Path
    results_dir: Path
    quick: bool
    gpu_slot: bool = False
    smoke: bool = False  # quick mode without canaries, settle waits or re-measuring: the tests' site builds

    @property
    def mode(self) -> str:
        return "quick" if self.quick else "full"


def settings() -> Settings:
    """Current settings; read each call so tests can change the environment."""
    def path(var: str, default: Path) -> Path:
        value = os.environ.get(var)
        return Path(value).resolve() if value else default

    return Settings(
        cache_dir=path("CROSSOVER_CACHE_DIR", PROJECT_ROOT / ".cache" / "crossover"),
        results_dir=path("CROSSOVER_RESULTS_DIR", PROJECT_ROOT / "results"),
        quick=os.environ.get("CROSSOVER_QUICK", "0") not in {"", "0", "false", "no"},
        gpu_slot=os.environ.get("CROSSOVER_GPU_SLOT", "0") not in {"", "0", "false", "no"},
        smoke=os.environ.get("CROSSOVER_SMOKE", "0") not in {"", "0", "false", "no"}
        and os.environ.get("CROSSOVER_QUICK", "0") not in {"", "0", "false", "no"},
    )


MAX_SECONDS = 7 * 86_400  # a week: beyond it a timeout is a typo (and 1e300 overflows the timers)


class SettingError(ValueError):
    """An environment variable with a value the build cannot use."""


def seconds(var: str, default: float) -> float:
    """A positive, finite number of seconds from `var`, or `default` when it is unset or empty."""
    raw = os.environ.get(var, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not 0 < value <= MAX_SECONDS:
        raise SettingError(f"{var}={raw!r}: expected a number of seconds greater than 0 and at most "
                           f"{MAX_SECONDS:g} (unset it for the default of {default:g})")
    return value


def settle_budget_s() -> float | None:
    """CROSSOVER_SETTLE_BUDGET as seconds, or None when unset: the most a whole run may spend waiting for
    the machine's usual state and re-measuring outlying rounds (scripts/measure-gpu sets it)."""
    value = seconds("CROSSOVER_SETTLE_BUDGET", math.inf)
    return None if math.isinf(value) else value


def experiment_box_s() -> float | None:
    """CROSSOVER_EXPERIMENT_BOX as seconds, or None when unset (every planned round runs)."""
    value = seconds("CROSSOVER_EXPERIMENT_BOX", math.inf)
    return None if math.isinf(value) else value
