"""Do two measurements support the same claims?  python -m build_hooks.claims A.json B.json

Renders every fact the pages use from each results file alone and compares the
sentences with the measured quantities blanked out (times, rates, sizes, ratios,
percentages), so "2 threads were 1.4× faster" and "2 threads were 1.6× faster" agree
while "one thread was 1.1× faster" does not; batch sizes and widths are kept, so a
crossover that moved is a difference. A claim that differs only in its marks (an interval's
rounds, "noisy", "taken under load": the bracketed caveats) keeps its verdict, and is counted
apart. Exit status 1 when any verdict differs.
"""

from __future__ import annotations

import argparse
import html
import re
import sys
from pathlib import Path

from build_hooks import page, store, untrusted
from build_hooks.dataset import Dataset, Machine

MEASURED = re.compile(r"\d[\d,]*(?:\.\d+)?\s?(?:[kMGTmµn]?(?:FLOP/s|FLOP|B/s|samples/s|tokens/s|s|B|Hz)\b|×|%"
                      r"|(?:years|days|hours|minutes)\b)")
TAG = re.compile(r"<[^>]+>")
# A bracket that only qualifies a verdict: an interval ("over all # rounds", "between the quartiles") or caveat words
# (render.CAVEAT_WORDS). Noise decides these run to run; the verdict beside them is the claim.
MARKS = re.compile(r"\s?\((?=[^()]*(?:rounds|quartiles|noisy|too few samples|under load|changed state))[^()]*\)")


def normalise(text: str) -> str:
    """A claim with its measured quantities replaced by '#'."""
    blanked = MEASURED.sub("#", html.unescape(TAG.sub("", untrusted.restore(text))))
    return blanked.replace("# to #", "#")  # an interval whose ends round alike prints one number


def claims(doc: dict, source: str) -> dict[str, str]:
    """Every fact, rendered from this one results file ('(no data)' where it lacks some)."""
    data = Dataset([Machine(doc, source, "this build host")])
    rendered = {}
    for name in page.names()["fact"]:
        try:
            rendered[name] = page.render_fact(name, data)
        except page.BadData as exc:  # the file's own path left out: two files missing the same thing agree
            rendered[name] = f"({exc})".replace(source, "the results file")
        except page.MissingData:
            rendered[name] = "(no data)"
    return rendered


def verdict(text: str) -> str:
    """A claim with its measured quantities blanked and its marks (bracketed intervals and caveats) removed."""
    return MARKS.sub("", normalise(text))


def differences(a: dict[str, str], b: dict[str, str]) -> list[tuple[str, str, str]]:
    return [(name, a[name], b[name]) for name in sorted(a) if normalise(a[name]) != normalise(b[name])]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("first", type=Path)
    parser.add_argument("second", type=Path)
    args = parser.parse_args(argv)
    try:
        a, b = (claims(store.load(p), str(p)) for p in (args.first, args.second))
    except store.ResultsError as exc:
        print(untrusted.terminal(f"crossover: {exc}"), file=sys.stderr)
        return 2
    found = differences(a, b)
    marks_only = [name for name, first, second in found if verdict(first) == verdict(second)]
    for name, first, second in found:  # sentences carry machine names from the files: escaped
        kind = " (marks only)" if name in marks_only else ""
        print(untrusted.terminal(f"{name}{kind}:\n  {args.first.name}: {normalise(first)}\n"
                                 f"  {args.second.name}: {normalise(second)}"))
    verdicts = len(found) - len(marks_only)
    print(f"{len(a) - len(found)} of {len(a)} claims agree; {len(found)} differ: "
          f"{len(marks_only)} only in their marks, {verdicts} in verdict.")
    return 1 if verdicts else 0


if __name__ == "__main__":
    sys.exit(main())
