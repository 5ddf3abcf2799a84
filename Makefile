# Two entry points for a fresh machine: `make demo` and `make test` (both idempotent).
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha256sum | cut -c1-12)

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export HF_HUB_DISABLE_PROGRESS_BARS := 1
export TRANSFORMERS_VERBOSITY := error
export OMP_THREAD_LIMIT := 1
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export PREFECT_LOGGING_LEVEL := WARNING
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS := 120

.PHONY: install system-deps node-tools demo test bench clean-store

system-deps:
	@command -v tesseract >/dev/null 2>&1 || { \
	  echo ">> installing Debian tesseract-ocr"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] && echo "" || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq tesseract-ocr tesseract-ocr-eng >/dev/null; }
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

$(STAMP): pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# torch first, exactly pinned, so nothing resolves a CUDA build.
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[test]'
	@rm -f $(VENV)/.installed-*; touch $(STAMP)

# The outside MCP clients the MCP tests drive (Inspector CLI, conformance suite): installed here from the committed
# lock file, never at test time; skipped quietly where there is no node (those tests then say why they skip).
node-tools:
	@if command -v npm >/dev/null 2>&1; then npm ci --prefix tools/node --no-audit --no-fund --loglevel=error >/dev/null; fi

install: system-deps $(STAMP) node-tools

demo: install
	$(VENV)/bin/citebound demo --store $${CITEBOUND_HOME:-./artifacts/demo-store}

test: install
	$(PY) -m pytest -q -p no:cacheprovider

bench: install
	for b in bench/*.py; do $(PY) $$b || exit 1; done
