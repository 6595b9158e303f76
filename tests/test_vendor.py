"""The vendored browser validator is exactly the locked npm package's code."""

import pytest

from conftest import ROOT

VENDORED = ROOT / "docs" / "javascripts" / "vendor" / "cfworker-json-schema"
PACKAGE = ROOT / "tools" / "node_modules" / "@cfworker" / "json-schema"


def test_vendored_validator_matches_the_locked_package():
    """Every vendored file equals the package's dist/esm file less its source-map comment (run make vendor)."""
    if not PACKAGE.is_dir():
        pytest.fail("tools/node_modules is not installed: run 'make test' (it runs npm ci in tools/)")
    shipped = sorted(p.name for p in VENDORED.glob("*.js"))
    assert shipped == sorted(p.name for p in (PACKAGE / "dist" / "esm").glob("*.js"))
    for name in shipped:
        original = (PACKAGE / "dist" / "esm" / name).read_text()
        expected = "".join(line for line in original.splitlines(keepends=True)
                           if not line.startswith("//# sourceMappingURL="))
        assert (VENDORED / name).read_text() == expected, name
