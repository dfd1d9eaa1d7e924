# The two commands of the README. Everything else is CMake presets (CMakePresets.json).
#   make bench   install what is missing, build the release preset, run the default comparison
#   make test    install what is missing, build and run the tests: debug, asan and tsan presets

BENCH_FLAGS ?= --ds lazy_list,hm_list --scheme none,debra,hp --threads 1,2,4 \
               --seconds 1 --trials 3 --keys 20K --insert 50 --delete 50
TEST_PRESETS ?= debug asan tsan
RESULTS := results/bench-$(shell date +%Y%m%d-%H%M%S).jsonl

.PHONY: bench test
bench:
	@scripts/deps.sh bench
	cmake --preset release
	cmake --build --preset release
	@mkdir -p results
	build/release/bench/reclaim-bench $(BENCH_FLAGS) --out $(RESULTS)
	@echo "results: $(RESULTS)"

test:
	@scripts/deps.sh test
	@set -e; for preset in $(TEST_PRESETS); do \
	  echo "== $$preset"; \
	  cmake --preset $$preset; \
	  cmake --build --preset $$preset; \
	  ctest --preset $$preset; \
	done
