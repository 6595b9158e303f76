"""A stand-in for tqdm where it is not installed: one line per experiment, then per 10%.

Measuring must run on a GPU machine that has only torch and numpy; tqdm is a nicety.
"""

from __future__ import annotations

import sys
import time


class LineProgress:
    """The part of tqdm's interface the measuring runner uses."""

    def __init__(self, total: int, file=sys.stderr, **_ignored):
        self.total, self.done, self.file = max(1, total), 0, file
        self.description, self.started, self.last_decile = "", time.monotonic(), -1

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        print(f"{self.done}/{self.total} points in {time.monotonic() - self.started:.0f} s", file=self.file)
        return False

    def set_description(self, text: str) -> None:
        self.description = text
        print(f"measuring {text} ...", file=self.file, flush=True)

    def set_postfix_str(self, text: str, refresh: bool = True) -> None:
        pass

    def write(self, text: str) -> None:
        print(text, file=self.file, flush=True)

    def update(self, n: int = 1) -> None:
        self.done += n
        decile = 10 * self.done // self.total
        if decile != self.last_decile:
            self.last_decile = decile
            print(f"  {10 * decile}% ({self.done}/{self.total} points, {self.description})",
                  file=self.file, flush=True)
