# lsmbench: the two commands of the README's Quick start are `make quickstart`
# and `make test`; both install what they need first.
SHELL := /bin/bash
JOBS ?= $(shell nproc)
BUILD ?= build
ASAN_BUILD ?= build-asan
CMAKE_FLAGS ?=

# Debian packages the build and the tests need (installed when run as root); systemd for
# systemd-analyze (the nightly role's units are verified), git for the nightly job's tests,
# Java and Maven for YCSB's reference client (workloads/ycsb/reference/record.sh).
DEB_PACKAGES := cmake ninja-build g++ pkg-config libgtest-dev nlohmann-json3-dev libyaml-cpp-dev \
	libleveldb-dev librocksdb-dev rocksdb-tools fio influxdb python3-venv \
	chromium openssh-server openssh-client iproute2 git systemd default-jdk-headless maven
VENV ?= .venv
PYTHON ?= python3

.PHONY: all deps venv build build-asan build-for-tests test test-fast coverage test-engine test-driver test-python bench quickstart reproduce reproduce-quick clean format lint docs

all: build

deps:
	@missing=$$(for p in $(DEB_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "Installing Debian packages:" $$missing; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else \
	    echo "Missing Debian packages (run as root to install them): $$missing" >&2; exit 1; \
	  fi; \
	fi
	@# The Pebble and fjall plugins need Go >= 1.26 and Rust with cargo, newer than Debian's
	@# (golang-go 1.19, rustc 1.63): installed where missing (as root), else CMake leaves
	@# the plugin out and says so.
	@if [ "$$(id -u)" = 0 ]; then engines/plugin/install-toolchains.sh; else \
	  PATH=$$PATH:/usr/local/go/bin:$$HOME/.cargo/bin; \
	  command -v go >/dev/null || echo "note: no Go >= 1.26 (as root, make deps installs it): the Pebble plugin is not built"; \
	  command -v cargo >/dev/null || echo "note: no cargo (as root, make deps installs Rust): the fjall plugin is not built"; \
	fi

# The Python environment: rebuilt when pyproject.toml changes.
$(VENV)/.installed: pyproject.toml | deps
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[dev]'
	touch $@

venv: $(VENV)/.installed

$(BUILD)/build.ninja: | deps
	cmake -S engines -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

$(ASAN_BUILD)/build.ninja: | deps
	cmake -S engines -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=None "-DCMAKE_CXX_FLAGS=-O1 -g1" -DLSM_SANITIZE=ON -DLSM_ENGINE_ONLY=ON $(CMAKE_FLAGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

build-asan: deps $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS)

# The sanitizer tree: -O1 with line tables (what ASan's reports need), asserts on. It builds
# in half the time -O2 -g takes and finds more (-O2 hid a stack-use-after-scope in a test).
# Engine unit tests under ASan+UBSan; driver calibration tests on the
# optimized build (they measure a harness's timing behaviour, which the
# sanitizers would distort).
test-engine: build-asan
	ctest --test-dir $(ASAN_BUILD) -L engine --output-on-failure -j $(JOBS)

# The optimized tree as the driver and Python tests need it (engines/CMakeLists.txt:
# lsm_programs_and_driver_tests); `make build` builds the engine's unit tests there too.
build-for-tests: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) --target lsm_programs_and_driver_tests -j $(JOBS)

test-driver: build-for-tests
	@if ctest --test-dir $(BUILD) -N -L driver | grep -q 'Total Tests: [1-9]'; then \
	  ctest --test-dir $(BUILD) -L driver --output-on-failure; fi

test-python: venv build-for-tests
	$(VENV)/bin/ruff check pipelines research/bench
	$(VENV)/bin/lint-imports --no-cache
	LSMBENCH_BUILD_DIR=$(CURDIR)/$(BUILD) $(VENV)/bin/pytest -q -n $(JOBS) --dist loadgroup --durations=15

# The quick loop for a change to the Python: no C++ build, no services (the markers in
# pyproject.toml name what the left-out tests need; `make test` runs them all), the
# tests spread over every core (pytest-xdist).
FAST_MARKERS := not (slow or influx or browser or netns or fio or java or root)
test-fast: venv
	$(VENV)/bin/ruff check pipelines research/bench
	$(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/pytest -q -m "$(FAST_MARKERS)" -n auto --durations=5

# The Python environment is made (mostly downloads) while the ASan tree compiles.
test: deps
	@$(MAKE) --no-print-directory venv & venv=$$!; \
	$(MAKE) --no-print-directory test-engine test-driver; tested=$$?; \
	wait $$venv && [ $$tested = 0 ]
	@$(MAKE) --no-print-directory test-python

# Line coverage of pipelines/lsmbench by the Python tests (the figure before and after a change
# to the tests): coverage/report.txt.
coverage: venv build-for-tests
	rm -f .coverage .coverage.*
	COVERAGE_PROCESS_START=$(CURDIR)/pyproject.toml LSMBENCH_COVERAGE_FILE=$(CURDIR)/.coverage \
	  LSMBENCH_BUILD_DIR=$(CURDIR)/$(BUILD) $(VENV)/bin/pytest -q -n $(JOBS) --dist loadgroup
	$(VENV)/bin/coverage combine -q --data-file=$(CURDIR)/.coverage
	mkdir -p coverage && $(VENV)/bin/coverage report --data-file=$(CURDIR)/.coverage > coverage/report.txt; \
	  tail -1 coverage/report.txt

lint: venv
	$(VENV)/bin/ruff check pipelines research/bench
	$(VENV)/bin/lint-imports --no-cache

# `make docs` regenerates docs/reference/ (CLI, spec, engine options); tests compare the pages.
docs: venv build-for-tests
	$(VENV)/bin/python -m lsmbench.cli.reference --out docs/reference
	$(BUILD)/bin/lsm-driver --describe-options builtin --markdown > docs/reference/engine-options.md
	for engine in builtin null; do \
	  $(BUILD)/bin/lsm-driver --describe-options $$engine > pipelines/lsmbench/engine_options/$$engine.json; \
	done
	# The leveldb plugin's, without the "plugin" block (where it was loaded from, its version).
	$(BUILD)/bin/lsm-driver --describe-options leveldb | $(VENV)/bin/python -c \
	  'import json, sys; d = json.load(sys.stdin); d.pop("plugin"); print(json.dumps(d, indent=1, sort_keys=True))' \
	  > pipelines/lsmbench/engine_options/leveldb.json

bench: build
	$(BUILD)/bin/lsm-bench

# The main job: the quickstart campaign (pipelines/campaigns/quickstart.yaml),
# two-phase runs under a real cgroup throttle. Only lsm-driver and lsm-sim (what
# the README's next commands need: lsmbench plan's merge cycles, plan --predict)
# are built, while the Python environment is made, so the whole job stays under
# 10 minutes.
# The README's figure is the run's latency figure: each quickstart draws it anew.
quickstart: deps
	@$(MAKE) --no-print-directory venv & venv=$$!; 	$(MAKE) --no-print-directory $(BUILD)/build.ninja && 	  cmake --build $(BUILD) --target lsm-driver lsm-sim -j $(JOBS); built=$$?; 	wait $$venv && [ $$built = 0 ]
	LSMBENCH_BUILD_DIR=$(CURDIR)/$(BUILD) $(VENV)/bin/lsmbench run pipelines/campaigns/quickstart.yaml --force; \
	  status=$$?; $(VENV)/bin/lsmbench report quickstart && \
	  cp "$${LSMBENCH_RESULTS:-results}/quickstart/report/figures/latency.png" docs/img/quickstart-latency.png && \
	  exit $$status

format:
	find engines -name '*.h' -o -name '*.cc' | xargs clang-format -i

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)

# The papers' experiments (docs/results/reproduce.md): runs them into results/reproduce/ and
# regenerates docs/results/luo-carey.md, mao.md and pramanik.md. reproduce-quick: short phases
# and few repetitions, under 30 minutes.
reproduce: venv build
	LSMBENCH_BUILD_DIR=$(CURDIR)/$(BUILD) $(VENV)/bin/lsmbench reproduce

reproduce-quick: venv build
	LSMBENCH_BUILD_DIR=$(CURDIR)/$(BUILD) $(VENV)/bin/lsmbench reproduce --quick
