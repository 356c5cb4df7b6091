# schedc: the two commands that matter are `make run` and `make test`; both
# install what is missing (Debian 12), configure and build first.

BUILD_DIR ?= build
LLVM_PREFIX := /usr/lib/llvm-22
PACKAGES := cmake ninja-build g++ ccache python3 llvm-22-dev libmlir-22-dev \
            mlir-22-tools llvm-22-tools libz3-dev libfmt-dev libgtest-dev \
            python3-psutil z3
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
JOBS ?= $(shell nproc)

.PHONY: all deps configure build run test bench docs clean

all: build

deps:
	@missing=""; for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

$(BUILD_DIR)/build.ninja: | deps
	cmake -G Ninja -S . -B $(BUILD_DIR) \
	  -DCMAKE_BUILD_TYPE=Release \
	  -DMLIR_DIR=$(LLVM_PREFIX)/lib/cmake/mlir \
	  -DLLVM_DIR=$(LLVM_PREFIX)/lib/cmake/llvm \
	  -DLLVM_EXTERNAL_LIT=$(LLVM_PREFIX)/bin/lit

configure: deps $(BUILD_DIR)/build.ninja

build: configure
	ninja -C $(BUILD_DIR) -j $(JOBS) sched-opt sched-translate schedc SchedUnitTests

run: build
	$(BUILD_DIR)/bin/schedc generate --strategy 1f1b --pp 4 --microbatches 8 --emit text

# A test that runs past 20 minutes fails instead of hanging the run (lit's
# --timeout needs python3-psutil).
test: build
	$(LLVM_PREFIX)/bin/lit -sv --timeout 1200 $(BUILD_DIR)/test

bench: build
	ninja -C $(BUILD_DIR) -j $(JOBS) schedc-bench
	$(BUILD_DIR)/bin/schedc-bench

docs: configure
	ninja -C $(BUILD_DIR) mlir-doc
	mkdir -p docs/Dialects docs/Passes
	cp $(BUILD_DIR)/docs/Dialects/SchedDialect.md docs/Dialects/
	cp $(BUILD_DIR)/docs/Passes/SchedPasses.md docs/Passes/

clean:
	rm -rf $(BUILD_DIR)
