"""The vendored browser code is exactly the locked npm packages' code."""

import re

import pytest

from conftest import ROOT

VENDOR = ROOT / "docs" / "javascripts" / "vendor"
MODULES = ROOT / "tools" / "node_modules"
MAKEFILE = (ROOT / "Makefile").read_text()


def without_source_map(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith("//# sourceMappingURL="))


@pytest.fixture(scope="module")
def modules(node_modules):
    return node_modules


def test_vendored_validator_matches_the_locked_package(modules):
    """Every vendored validator file equals the package's dist/esm file less its source-map comment (run make vendor)."""
    package = modules / "@cfworker" / "json-schema" / "dist" / "esm"
    shipped = sorted(p.name for p in (VENDOR / "cfworker-json-schema").glob("*.js"))
    assert shipped == sorted(p.name for p in package.glob("*.js"))
    for name in shipped:
        assert (VENDOR / "cfworker-json-schema" / name).read_text() == without_source_map((package / name).read_text()), name


def test_vendored_tensorflow_js_matches_the_locked_packages(modules):
    """Every file in vendor/tfjs is one the Makefile names, byte for byte the locked package's (scripts less their source-map line)."""
    named = re.search(r"^TFJS_FILES := (.*?)\n(?!\t)", MAKEFILE, re.S | re.M).group(1).replace("\\\n", " ").split()
    shipped = sorted(p.name for p in (VENDOR / "tfjs").iterdir())
    assert shipped == sorted(name.rsplit("/", 1)[1] for name in named)
    for name in named:
        original = modules / "@tensorflow" / name
        copy = VENDOR / "tfjs" / original.name
        if name.endswith(".js"):
            assert copy.read_text() == without_source_map(original.read_text()), name
        else:
            assert copy.read_bytes() == original.read_bytes(), name


def test_the_wasm_builds_are_the_one_thread_ones():
    """No threaded WebAssembly build is shipped: a static host cannot promise the isolation threads need."""
    assert not list((VENDOR / "tfjs").glob("*threaded*"))
    assert sorted(p.name for p in (VENDOR / "tfjs").glob("*.wasm")) == ["tfjs-backend-wasm-simd.wasm", "tfjs-backend-wasm.wasm"]
