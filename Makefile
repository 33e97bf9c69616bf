# The two quick-start commands: `make demo` and `make test`. Everything they need is installed here,
# because CI and new machines start from a clean clone with nothing installed by hand.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
VPY := $(VENV)/bin/python
DEMO_SYSDEPS := bubblewrap
TEST_SYSDEPS := bubblewrap postgresql chromium

.PHONY: demo test venv dev sysdeps-demo sysdeps-test bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip setuptools wheel
	$(VPY) -m pip install -q -e .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed
	$(VPY) -m pip install -q -e ".[dev]"
	touch $@

venv: $(VENV)/.installed
dev: $(VENV)/.installed-dev

# Debian packages, installed only when missing and only when we are root with apt-get.
sysdeps-demo:
	@bash scripts/ensure_sysdeps.sh $(DEMO_SYSDEPS)
sysdeps-test:
	@bash scripts/ensure_sysdeps.sh $(TEST_SYSDEPS)

demo: venv sysdeps-demo
	$(VENV)/bin/envscaler demo

test: dev sysdeps-test
	$(VPY) -m pytest

bench: dev sysdeps-demo
	$(VPY) -m benchmarks

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
