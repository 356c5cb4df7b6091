# schedc: the two commands that matter are `make run` and `make test`; both
# install what is missing (Debian 12), configure and build first.

BUILD_DIR ?= build
LLVM_PREFIX := /usr/lib/llvm-22
PACKAGES := cmake ninja-build g++ ccache python3 llvm-22-dev libmlir-22-dev \
            mlir-22-tools llvm-22-tools libz3-dev libfmt-dev libgtest-dev \
            python3-psutil z3 pybind11-dev python3-dev python3-torch \
            python3-jsonschema libzstd-dev
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
JOBS ?= $(shell nproc)
# ccache keys on paths relative to the checkout, so clones and worktrees of
# the project share their cache.
export CCACHE_BASEDIR ?= $(CURDIR)

.PHONY: all deps configure build run test sanitize fuzz-deps fuzz-build fuzz \
        bench docs clean

all: build

# $(call install-missing,PACKAGES): apt-get installs those not installed yet.
define install-missing
	@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
endef

deps:
	$(call install-missing,$(PACKAGES))

CMAKE_LLVM := -DMLIR_DIR=$(LLVM_PREFIX)/lib/cmake/mlir \
              -DLLVM_DIR=$(LLVM_PREFIX)/lib/cmake/llvm \
              -DLLVM_EXTERNAL_LIT=$(LLVM_PREFIX)/bin/lit
TOOLS := sched-opt sched-translate schedc SchedUnitTests
# What other programs load (docs/embedding.md): the mlir-opt plugin and the
# Python module; not built under sanitizers (test/lit.cfg.py says why).
EMBED := SchedPlugin _schedc

$(BUILD_DIR)/build.ninja: | deps
	cmake -G Ninja -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release $(CMAKE_LLVM)

configure: deps $(BUILD_DIR)/build.ninja

build: configure
	ninja -C $(BUILD_DIR) -j $(JOBS) $(TOOLS) $(EMBED)

# The main job: which layout for DeepSeek-V3 on 2,048 H800s (NVLink nodes of
# 8 on InfiniBand) and on 2,048 GB200s (NVL72 racks), with and without
# pipeline parallelism, with DeepSeek's precision recipe (FP8 GEMMs, BF16
# Adam moments, FP32 master weights and gradients: DeepSeek-V3 technical
# report section 3.3); the recommended schedules are written lowered and
# verified, with their pictures, under $(BUILD_DIR)/plans.
run: build
	@mkdir -p $(BUILD_DIR)/plans
	$(BUILD_DIR)/bin/schedc plan --model deepseek-v3 \
	  --cluster h800-ib,gb200-nvl72 --devices 2048 --precision fp8 \
	  --optimizer-moments bf16 --moe-dispatch-dtype fp8 --top 5 \
	  --write-plan $(BUILD_DIR)/plans/deepseek-v3

# A test that runs past 20 minutes fails instead of hanging the run (lit's
# --timeout needs python3-psutil).
test: build
	$(LLVM_PREFIX)/bin/lit -sv --timeout 1200 $(BUILD_DIR)/test

# The lit suite on tools built with ASan and UBSan (docs/fuzzing.md); -O1
# and line tables keep the build fast and the reports readable.
SAN_BUILD_DIR ?= build-san
SANITIZE ?= address,undefined
SAN_CC ?= gcc
SAN_CXX ?= g++
# Extra lit flags, e.g. --filter-out to run a subset (CI: .ci/run).
SAN_LIT_FLAGS ?=

CMAKE_SAN := -DCMAKE_BUILD_TYPE=RelWithDebInfo \
             -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
             -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
             -DSCHEDC_SANITIZE=$(SANITIZE) $(CMAKE_LLVM)

$(SAN_BUILD_DIR)/build.ninja: | deps
	CC=$(SAN_CC) CXX=$(SAN_CXX) cmake -G Ninja -S . -B $(SAN_BUILD_DIR) \
	  $(CMAKE_SAN)

sanitize: $(SAN_BUILD_DIR)/build.ninja
	ninja -C $(SAN_BUILD_DIR) -j $(JOBS) $(TOOLS)
	$(LLVM_PREFIX)/bin/lit -sv --timeout 1200 $(SAN_LIT_FLAGS) $(SAN_BUILD_DIR)/test

# libFuzzer targets (fuzz/, docs/fuzzing.md): clang-22, ASan and UBSan.
# Each runs FUZZ_SECONDS; any finding fails the run.
FUZZ_BUILD_DIR ?= build-fuzz
FUZZ_PACKAGES := clang-22 libclang-rt-22-dev
FUZZ_SECONDS ?= 60
FUZZERS := torch-csv parse verify description json-plan pass-options \
           calibration

fuzz-deps: deps
	$(call install-missing,$(FUZZ_PACKAGES))

$(FUZZ_BUILD_DIR)/build.ninja: | fuzz-deps
	CC=clang-22 CXX=clang++-22 cmake -G Ninja -S . -B $(FUZZ_BUILD_DIR) \
	  $(CMAKE_SAN) -DSCHEDC_FUZZ=ON

fuzz-build: $(FUZZ_BUILD_DIR)/build.ninja
	ninja -C $(FUZZ_BUILD_DIR) -j $(JOBS) schedc-fuzzers

fuzz: fuzz-build
	@failed=""; for f in $(FUZZERS); do \
	  fuzz/run-fuzzer.sh $(FUZZ_BUILD_DIR) $$f $(FUZZ_SECONDS) || failed="$$failed $$f"; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzzers with findings:$$failed"; exit 1; fi

bench: build
	ninja -C $(BUILD_DIR) -j $(JOBS) schedc-bench planner-bench synthesis-bench \
	  growth-bench
	$(BUILD_DIR)/bin/schedc-bench
	$(BUILD_DIR)/bin/planner-bench
	$(BUILD_DIR)/bin/growth-bench
	$(BUILD_DIR)/bin/synthesis-bench
	@# Every run: the recipe runs (runs.json) and the whole published tables
	@# (tables.json), development and held-out splits reported apart
	@# (docs/fidelity-protocol.md); then the recipe runs without recipes.
	python3 bench/fidelity/fidelity.py $(BUILD_DIR)/bin/schedc
	python3 bench/fidelity/fidelity.py --layout-only \
	  --runs bench/fidelity/runs.json $(BUILD_DIR)/bin/schedc
	@# The verifier against the torch executor on 2,000 mutated plans,
	@# the violated ones run too (make test runs 300 and only the verified
	@# ones); skipped where python3-torch is missing.
	@if /usr/bin/python3 -c 'import torch.distributed' 2>/dev/null; then \
	  /usr/bin/python3 integrations/torch/check_mutants.py \
	    --bin $(BUILD_DIR)/bin --count 2000 --seed 7 --engine-violated; \
	else echo "check_mutants: skipped (no python3-torch)"; fi

# Generated references, and one timeline picture per strategy
# (docs/pictures, from schedc generate --emit svg).
docs: build
	ninja -C $(BUILD_DIR) mlir-doc
	mkdir -p docs/Dialects docs/Passes
	cp $(BUILD_DIR)/docs/Dialects/SchedDialect.md docs/Dialects/
	cp $(BUILD_DIR)/docs/Passes/SchedPasses.md docs/Passes/
	docs/pictures/make-pictures.sh $(BUILD_DIR)/bin docs/pictures

clean:
	rm -rf $(BUILD_DIR)
