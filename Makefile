# The two quick-start commands: `make demo` and `make test`. Everything they need is installed here,
# because CI and new machines start from a clean clone with nothing installed by hand.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
VPY := $(VENV)/bin/python
DEMO_SYSDEPS := bubblewrap
TEST_SYSDEPS := bubblewrap postgresql chromium

.PHONY: demo test venv dev bfcl sysdeps-demo sysdeps-test bench clean

# BFCL's official multi-turn package, WITHOUT its declared dependencies (torch, faiss, provider SDKs and
# a numpy pin that would replace ours): the parts `envscaler eval bfcl-mt` uses need only mpmath.
# Not in pyproject.toml, because pip would then resolve those dependencies. See docs/bfcl.md.
BFCL_PACKAGES := bfcl-eval==2026.3.23 mpmath==1.3.0

# setuptools prints a boxed "Editable installation" warning about folders named like the package shadowing
# it; here those folders ARE the package (an editable install of this checkout), so the box only alarms.
QUIET_EDITABLE := PYTHONWARNINGS="ignore:Editable installation"

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip setuptools wheel
	$(QUIET_EDITABLE) $(VPY) -m pip install -q -e .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed
	$(QUIET_EDITABLE) $(VPY) -m pip install -q -e ".[dev]"
	touch $@

$(VENV)/.installed-bfcl: $(VENV)/.installed Makefile
	$(VPY) -m pip install -q --no-deps $(BFCL_PACKAGES)
	touch $@

venv: $(VENV)/.installed $(VENV)/.installed-bfcl
dev: $(VENV)/.installed-dev $(VENV)/.installed-bfcl
bfcl: $(VENV)/.installed-bfcl

# Debian packages, installed only when missing and only when we are root with apt-get.
sysdeps-demo:
	@bash scripts/ensure_sysdeps.sh $(DEMO_SYSDEPS)
sysdeps-test:
	@bash scripts/ensure_sysdeps.sh $(TEST_SYSDEPS)

demo: venv sysdeps-demo
	$(VENV)/bin/envscaler demo

# Three pytest-xdist workers on CI's 2 cores: with two, a third of the workers' time went to waiting
# (subprocess CLIs, servers starting, signals), about 1.4 cores busy; a clean clone on this 2-core machine,
# idle, ran pytest in 954 s with 2 and 851 s with 3. Each worker has its own session servers; whole test
# files go to one worker, heaviest first (tests/fixtures/xdist_schedule.py).
# TEST_WORKERS=0 runs the suite in this process, as a plain `pytest` does.
TEST_WORKERS ?= 3
test: dev sysdeps-test
	$(VPY) -m pytest $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadgroup)

bench: dev sysdeps-demo
	$(VPY) -m benchmarks

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
