# softib: the two commands the README promises, plus conveniences.
#   make test   install what the build needs (apt, as root), build with ASan+UBSan, run every
#               test, then build the libFuzzer targets with clang and fuzz each briefly
#   make demo   install, build (release) and show softib working
#   make release / make bench build the release preset with profile-guided optimisation
SHELL := /bin/bash
JOBS ?= $(shell nproc)
TEST_PRESET ?= asan
FUZZ_SECONDS ?= 10
FUZZ_TARGETS := roce_v2 packet mad net sm_files ipc rc_receive shm_records verbs_ops

.PHONY: help bootstrap bootstrap-bench build release test test-unit tsan fuzz fuzz-smoke demo bench clean

help:
	@echo "make test    build with sanitizers and run every test (installs packages as root)"
	@echo "make demo    build and show softib working"
	@echo "make build   debug build;  make release   optimised build"
	@echo "make fuzz    run each libFuzzer target for FUZZ_SECONDS (default $(FUZZ_SECONDS))"
	@echo "make tsan    build with ThreadSanitizer and run the threaded suites (unit, verbs, protocol, daemon)"
	@echo "make bench   run the benchmarks (JSON lines, each against its anchor)"

bootstrap:
	@if [ "$$(id -u)" -eq 0 ]; then bash scripts/bootstrap.sh; else sudo bash scripts/bootstrap.sh; fi

# The build packages plus the data-path anchors (UCX, libfabric) that `make bench` runs.
bootstrap-bench:
	@if [ "$$(id -u)" -eq 0 ]; then bash scripts/bootstrap.sh --bench; else sudo bash scripts/bootstrap.sh --bench; fi

build: bootstrap
	cmake --preset debug >/dev/null
	cmake --build --preset debug -j $(JOBS)

# Optimised with profiles of the data path's workloads (scripts/pgo.sh; README, "Profile-guided
# builds"): taken when there are none. `make bench` takes them again when a source file is
# newer than they are.
# A training that fails leaves the plain -O2 build.
take_profiles = bash scripts/pgo.sh $(1) || echo "pgo: no profiles taken: the release build is the plain -O2 one"

release: bootstrap
	$(call take_profiles,--if-missing)
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS)

test: test-unit fuzz-smoke

# ThreadSanitizer over the suites whose threads share a device (engines, leases, rings, CQs)
# and softibd's: labels unit, verbs, protocol, daemon; tests/tsan.supp lists the races tests
# make on purpose. Not in `make test`: a third whole build would take CI past its time.
tsan: bootstrap
	cmake --preset tsan >/dev/null
	cmake --build --preset tsan -j $(JOBS)
	ctest --preset tsan -j $(JOBS)

test-unit: bootstrap
	cmake --preset $(TEST_PRESET) >/dev/null
	cmake --build --preset $(TEST_PRESET) -j $(JOBS)
	ctest --preset $(TEST_PRESET) -j $(JOBS)

# Real fuzzing, bounded: each target starts from its checked-in corpus and runs for a few
# seconds; new inputs go to build/fuzz/corpus, never into the source tree. -entropic=0: the
# MAD target has ~25,000 coverage features, and libFuzzer's entropic schedule then spends
# 88% of its time updating feature frequencies (33 exec/s instead of 700).
fuzz-smoke: FUZZ_SECONDS = 5
fuzz-smoke fuzz: bootstrap
	cmake --preset fuzz >/dev/null
	cmake --build --preset fuzz -j $(JOBS) --target $(addprefix fuzz_,$(FUZZ_TARGETS))
	@set -e; for t in $(FUZZ_TARGETS); do \
	  mkdir -p build/fuzz/corpus/$$t; \
	  log=build/fuzz/fuzz_$$t.log; \
	  if ! build/fuzz/tests/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 -entropic=0 \
	       build/fuzz/corpus/$$t tests/fuzz/corpus/$$t >$$log 2>&1; then \
	    tail -n 60 $$log; echo "fuzz: $$t FAILED (log: $$log)"; exit 1; \
	  fi; \
	  echo "fuzz: $$t ok, $$(grep -m1 -o 'number_of_executed_units: [0-9]*' $$log) in $(FUZZ_SECONDS)s"; \
	done

# Benchmarks print JSON lines, each with its anchor measured in the same run. BENCH_ARGS=--quick
# keeps the SM benchmarks to small fabrics (the full run takes OpenSM several minutes) and the
# data-path benchmark to 5 sizes and 2 rounds. bench_verbs takes arguments: datapath.py runs it
# against UCX, libfabric, memcpy and the cache-line probe.
bench: bootstrap-bench
	$(call take_profiles)
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS)
	@set -e; for b in build/release/bench/bench_*; do \
	  case $$b in */bench_verbs) ;; *) $$b ;; esac; \
	done
	python3 bench/datapath.py $(BENCH_ARGS)
	python3 bench/bringup.py $(BENCH_ARGS)
	python3 bench/routing_quality.py $(BENCH_ARGS)
	python3 bench/reroute.py $(BENCH_ARGS)
	python3 bench/netdiscover.py $(BENCH_ARGS)
	python3 bench/dropin.py $(if $(findstring --quick,$(BENCH_ARGS)),--quick)

# Only what the demo runs: softib, softibd and the drop-in libibverbs, optimised.
demo: bootstrap
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS) --target softib softibd softib_ibverbs
	bash scripts/demo.sh build/release

clean:
	rm -rf build
