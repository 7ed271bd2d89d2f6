# The front door: `make demo` (cko alone, in build-demo/), `make test`, `make bench`, `make static`, `make fuzz`.
BUILD        ?= build
STATIC_BUILD ?= build-static
JOBS         ?= $(shell nproc)
WERROR       ?= $(if $(CI),ON,OFF)
LAUNCHER     := $(if $(shell command -v ccache),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache,)
CMAKE_FLAGS  ?=

PORTABLE_BUILD ?= build-portable
DEMO_BUILD     ?= build-demo

.PHONY: all deps deps-demo configure build test demo demo-build bench static portable sanitize fuzz clean

all: build

deps:
	@bash scripts/deps.sh

# Only what `make demo` needs: no GoogleTest, Google Benchmark, torch, chromium, Slurm, clang, node.
deps-demo:
	@bash scripts/deps.sh --demo

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DCKO_WERROR=$(WERROR) $(LAUNCHER) $(CMAKE_FLAGS)

configure: $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)
	@echo "built $(BUILD)/cko"

test: deps
	@$(MAKE) --no-print-directory build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The demo's own build directory: the cko target only, no tests or benchmarks (so neither GoogleTest
# nor Google Benchmark is needed), with Ninja and the unity build (cmake/CkoUnity.cmake): about 2.4
# times less compiling than the file-by-file build that build/ (make build, make test) keeps. Should
# the unity build fail (two files of a library with the same file-local name), the demo builds file
# by file instead, slower; under CI that is an error, so that the clash gets fixed (and CI's
# `make static` builds the same libraries unity, without a fallback). The orchestration layers
# (CKO_COLD_LAYERS in CMakeLists.txt) compile at -O0 here, util (hashing, JSON), the importers,
# timeline and stats at -O3: a fifth less building for a first verdict, the loop as fast;
# `make build`, `portable` and `release` keep -O3.
DEMO_CONFIGURE := cmake -G Ninja -S . -B $(DEMO_BUILD) -DCMAKE_BUILD_TYPE=Release -DCKO_WERROR=$(WERROR) \
  $(LAUNCHER) -DCKO_BUILD_TESTS=OFF -DCKO_BUILD_BENCH=OFF -DCKO_COLD_OPT=-O0 $(CMAKE_FLAGS)
demo-build:
	@[ -f $(DEMO_BUILD)/build.ninja ] || $(DEMO_CONFIGURE) -DCKO_UNITY_BUILD=ON
	@cmake --build $(DEMO_BUILD) -j $(JOBS) --target cko || { \
	  grep -q '^CKO_UNITY_BUILD:BOOL=ON' $(DEMO_BUILD)/CMakeCache.txt && [ -z "$(CI)" ] || exit 1; \
	  echo "demo: the unity build failed (above); building file by file instead" >&2; \
	  $(DEMO_CONFIGURE) -DCKO_UNITY_BUILD=OFF && cmake --build $(DEMO_BUILD) -j $(JOBS) --target cko; }

demo: deps-demo
	@$(MAKE) --no-print-directory demo-build
	CKO=$(CURDIR)/$(DEMO_BUILD)/cko bash scripts/demo.sh

bench: deps
	@$(MAKE) --no-print-directory build
	@for b in $(BUILD)/bench/bench_*; do echo "== $$b"; $$b --benchmark_min_time=0.2 || exit 1; done

static: deps
	bash scripts/simdjson-source.sh $(STATIC_BUILD)/_deps
	cmake -S . -B $(STATIC_BUILD) -DCMAKE_BUILD_TYPE=Release -DCKO_STATIC=ON -DCKO_UNITY_BUILD=ON $(LAUNCHER) \
	  -DCKO_SIMDJSON_SOURCE=$$(ls -d $(CURDIR)/$(STATIC_BUILD)/_deps/simdjson-*/ | head -n1)
	cmake --build $(STATIC_BUILD) -j $(JOBS) --target cko
	@file $(STATIC_BUILD)/cko | grep -q 'statically linked' || { echo "$(STATIC_BUILD)/cko is not static"; exit 1; }
	@! ldd $(STATIC_BUILD)/cko >/dev/null 2>&1 || { echo "ldd lists dependencies of $(STATIC_BUILD)/cko"; exit 1; }
	@echo "static binary: $(STATIC_BUILD)/cko ($$(file -b $(STATIC_BUILD)/cko | cut -d, -f1-2))"

# Like static, but glibc stays dynamic: runs on hosts with this glibc or newer and reads GPUs through
# NVML (dlopen), which a fully static binary cannot. The binary for GPU hosts. A second link of
# $(STATIC_BUILD)'s libraries (target cko-portable), copied to $(PORTABLE_BUILD)/cko.
portable: deps
	bash scripts/simdjson-source.sh $(STATIC_BUILD)/_deps
	cmake -S . -B $(STATIC_BUILD) -DCMAKE_BUILD_TYPE=Release -DCKO_STATIC=ON -DCKO_UNITY_BUILD=ON $(LAUNCHER) \
	  -DCKO_SIMDJSON_SOURCE=$$(ls -d $(CURDIR)/$(STATIC_BUILD)/_deps/simdjson-*/ | head -n1)
	cmake --build $(STATIC_BUILD) -j $(JOBS) --target cko-portable
	install -D -m 755 $(STATIC_BUILD)/cko-portable $(PORTABLE_BUILD)/cko
	@bad=$$(ldd $(PORTABLE_BUILD)/cko | grep -v -E 'linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so' || true); \
	  [ -z "$$bad" ] || { echo "$(PORTABLE_BUILD)/cko depends on more than glibc:"; echo "$$bad"; exit 1; }
	@echo "portable binary: $(PORTABLE_BUILD)/cko (glibc $$(ldd --version | head -n1 | grep -o '[0-9.]*$$') or newer)"

# Every test again under clang ASan+UBSan, in build-fuzz/ (the compile that `make fuzz` reuses).
sanitize: deps
	bash scripts/sanitize.sh

# libFuzzer targets (clang, ASan+UBSan) in build-fuzz/, each run FUZZ_SECONDS (default 30).
FUZZ_SECONDS ?= 30
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) bash scripts/fuzz.sh

clean:
	rm -rf $(BUILD) $(STATIC_BUILD) $(PORTABLE_BUILD) $(DEMO_BUILD) build-fuzz

# `make release`: from the one portable compile, dist/cko-VERSION-linux-x86_64.tar.gz (bin/cko,
# share/cko, README), the wheel dist/cko-VERSION-py3-none-manylinux_2_36_x86_64.whl (cko on PATH,
# share/cko, the cko_driver SDK) and dist/SHA256SUMS. VERSION comes from the git tag (v0.3.0 ->
# 0.3.0; docs/release.md); self-check first refuses a skill package of another release series.
.PHONY: release
release: portable
	$(PORTABLE_BUILD)/cko self-check
	SOURCE_DATE_EPOCH=$${SOURCE_DATE_EPOCH:-$$(git log -1 --format=%ct 2>/dev/null || echo 315532800)} \
	  python3 scripts/release.py --binary $(PORTABLE_BUILD)/cko --out dist
