# SPDX-License-Identifier: MIT
# The two commands of the README. Everything else is CMake presets (CMakePresets.json).
#   make bench   install what is missing, build the lab (release), run the default comparison
#   make test    install what is missing, build and run the tests: the lab preset (the lab, tools,
#                packaging), then the library's tests under the asan and tsan presets
#   make check   the tier for the edit loop: the debug preset, every test without sanitizers
#                (every container suite whole) and the lab's checks, in build/debug
#   make verify  the model checker at release depth (docs/verification.md), in build/debug
# Both make .venv, the Python of the tools (tools/requirements.txt), when it is missing or stale.

# The default comparison (one scheme of each family on short operations and with a stalled
# thread); any experiment file works, and extra lab flags go in BENCH_FLAGS (e.g. --seconds 0.2).
BENCH_EXPERIMENT ?= experiments/default.toml
BENCH_FLAGS ?=
TEST_PRESETS ?= lab asan tsan
BENCH_BUILD := build/bench
RESULTS := results/bench-$(shell date +%Y%m%d-%H%M%S).jsonl
VENV := .venv
PYTHON := $(abspath $(VENV))/bin/python
TOOLS := PYTHONPATH=tools $(PYTHON) -m reclaim_tools

.PHONY: bench test check verify
# The lab is built in build/bench with only the schemes the experiment runs (each scheme is one
# translation unit of the lab, about 10 s of compiler time), the release preset's optimization;
# `cmake --preset release && cmake --build --preset release` builds the whole lab in build/release.
bench:
	@scripts/deps.sh bench
	@$(MAKE) --no-print-directory $(VENV)/requirements.stamp
	cmake --preset release -B $(BENCH_BUILD) \
	  "-DRECLAIM_BENCH_ONLY_SCHEMES=$$($(TOOLS) schemes $(BENCH_EXPERIMENT) --lab-flags '$(BENCH_FLAGS)')"
	cmake --build $(BENCH_BUILD) --target reclaim-bench
	@mkdir -p results
	$(BENCH_BUILD)/bench/reclaim-bench --experiment $(BENCH_EXPERIMENT) $(BENCH_FLAGS) --out $(RESULTS)
	@echo "results: $(RESULTS)"
	@$(TOOLS) report $(BENCH_EXPERIMENT) --results $(RESULTS) --out results/report.html >/dev/null
	@echo "report: $(abspath results/report.html) (open it in a browser)"

test:
	@scripts/deps.sh test
	@$(MAKE) --no-print-directory $(VENV)/requirements.stamp
	@set -e; for preset in $(TEST_PRESETS); do \
	  echo "== $$preset"; \
	  cmake --preset $$preset -DRECLAIM_PYTHON=$(PYTHON); \
	  cmake --build --preset $$preset; \
	  ctest --preset $$preset; \
	done

check:
	@scripts/deps.sh test
	@$(MAKE) --no-print-directory $(VENV)/requirements.stamp
	cmake --preset debug -DRECLAIM_PYTHON=$(PYTHON)
	cmake --build --preset debug
	ctest --preset debug

# Every model on 200,000 random schedules and every injected fault on up to 100,000 per model, the
# pairs known to survive included (make test runs them at 10,000 and 20,000, those left out): about
# half an hour on one core at make test's rate.
VERIFY := build/debug/tests/verify/reclaim-verify
verify:
	@scripts/deps.sh test
	@$(MAKE) --no-print-directory $(VENV)/requirements.stamp
	cmake --preset debug -DRECLAIM_PYTHON=$(PYTHON)
	cmake --build --preset debug --target reclaim-verify
	$(VERIFY) --iterations 200000
	$(VERIFY) --mutants --iterations 100000

# The tools' virtual environment, installed again only when tools/requirements.txt changes.
$(VENV)/requirements.stamp: tools/requirements.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r tools/requirements.txt
	touch $@
