# kbench build. `make` builds build/kbench; `make run` runs the main job;
# `make test` builds and runs every test (GPU tests skip, saying so, when there is
# no GPU); both install what they need first when it is missing (.ci/deps) and
# build in parallel; `make check` runs the static checks (cppcheck, banned functions, the
# include layers); `make asan` builds the host code and host tests under
# AddressSanitizer and UBSan in build-asan/ and runs them; `make memcheck` runs
# the GPU tests under compute-sanitizer. Host code is C17 (gcc), kernels are CUDA
# for sm_90 plus compute_90 PTX.

CUDA     ?= /usr/local/cuda
NVCC     ?= $(CUDA)/bin/nvcc
CC       ?= gcc
B        := build

VERSION  := 0.1.0
GIT      := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)

CPPFLAGS := -Isrc -I$(CUDA)/include -I$(B)/shim -D_GNU_SOURCE \
            -DKB_VERSION='"$(VERSION)"' -DKB_GIT='"$(GIT)"'
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c17 -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wvla $(SAN)
# Sanitizer flags for host code, compiling and linking (make asan sets them).
SAN      ?=
NVARCH   := -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
NVFLAGS  = -std=c++17 -O3 -lineinfo -Isrc $(NVARCH) \
            -Werror all-warnings -Xcompiler -Wall,-Wextra
# Kernels that use Hopper-only instructions (wgmma, setmaxnreg) are built for the
# arch-specific target sm_90a; they carry no PTX for other GPUs.
HOPPER_CU := variants/attention/flash_wgmma.cu
# The binary finds libraries shipped beside it (build/lib) first, then CUDA's.
LDFLAGS  := -L$(CUDA)/lib64 \
            -Wl,-rpath,'$$ORIGIN/lib' -Wl,-rpath,'$$ORIGIN/../../lib' -Wl,-rpath,$(CUDA)/lib64
LDLIBS   := -lcjson -lsqlite3 -lcupti -lcublas -lcudart_static -ldl -lpthread -lrt -lm -lstdc++

LIB_C    := $(wildcard src/util/*.c src/results/*.c src/kernels/*.c src/profiler/*.c \
              src/store/*.c src/report/*.c)
CLI_C    := $(wildcard src/cli/*.c)
CU       := $(wildcard src/kernels/*.cu src/profiler/*.cu variants/*/*.cu)
# The CUDA objects' folder: the host's by default; `make asan` points it at the
# plain build, since SAN does not change what nvcc builds.
CU_B     ?= $(B)
LIB_O    := $(LIB_C:%.c=$(B)/%.o) $(CU:%.cu=$(CU_B)/%.o)
CLI_O    := $(CLI_C:%.c=$(B)/%.o)

HOST_TEST_BIN := $(patsubst tests/%.c,$(B)/tests/%,$(wildcard tests/unit/*.c tests/cli/*.c))
GPU_TEST_BIN  := $(patsubst tests/%.c,$(B)/tests/%,$(wildcard tests/gpu/*.c))
TEST_BIN := $(HOST_TEST_BIN) $(GPU_TEST_BIN)
# Kernels only the GPU tests use (a plain copy whose bytes are known).
GPU_TEST_O := $(patsubst %.cu,$(CU_B)/%.o,$(wildcard tests/gpu/*.cu))

# Libraries the GPU machine lacks travel in build/lib; replaced by rename, never
# rewritten in place, so programs that have them loaded keep running.
SHIPLIBS := libcjson.so.1 libcmocka.so.0

all: $(B)/kbench shiplibs

$(B)/shim/string:
	@mkdir -p $(@D) && : > $@

$(B)/%.o: %.c $(B)/shim/string
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(CU_B)/%.o: %.cu
	@mkdir -p $(@D)
	$(NVCC) $(NVFLAGS) -MMD -MP -c $< -o $@

$(HOPPER_CU:%.cu=$(CU_B)/%.o): NVARCH := -gencode arch=compute_90a,code=sm_90a -Xptxas -warn-spills

$(B)/libkb.a: $(LIB_O)
	@rm -f $@
	ar rcs $@ $^

$(B)/kbench: $(CLI_O) $(B)/libkb.a
	$(CC) $(SAN) $(CLI_O) $(B)/libkb.a -o $@ $(LDFLAGS) $(LDLIBS)

# Tests of the commands themselves (tests/cli/test_*_inproc.c) call them in
# their own process: they link the command objects, all but main's.
CMD_O    := $(filter-out $(B)/src/cli/main.o,$(CLI_O))
INPROC_TEST_BIN := $(patsubst tests/%.c,$(B)/tests/%,$(wildcard tests/cli/*_inproc.c))
$(INPROC_TEST_BIN): $(CMD_O)
$(INPROC_TEST_BIN): TEST_O = $(CMD_O)

$(HOST_TEST_BIN): $(B)/tests/%: tests/%.c tests/kbtest.h $(B)/libkb.a $(B)/shim/string
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests $(CFLAGS) $< $(TEST_O) $(B)/libkb.a -o $@ $(LDFLAGS) -lcmocka $(LDLIBS)

$(GPU_TEST_BIN): $(B)/tests/gpu/%: tests/gpu/%.c tests/kbtest.h $(B)/libkb.a $(GPU_TEST_O) $(B)/shim/string
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests $(CFLAGS) $< $(GPU_TEST_O) $(B)/libkb.a -o $@ $(LDFLAGS) \
	  -lcmocka $(LDLIBS)

shiplibs:
	@mkdir -p $(B)/lib
	@for l in $(SHIPLIBS); do p=$$(/sbin/ldconfig -p | awk -v l=$$l '$$1==l {print $$NF; exit}'); \
	  [ -n "$$p" ] || { echo "missing $$l"; exit 1; }; \
	  cmp -s "$$p" $(B)/lib/$$l || { cp -L "$$p" $(B)/lib/$$l.tmp && mv -f $(B)/lib/$$l.tmp $(B)/lib/$$l; } \
	  || exit 1; done

tests: $(TEST_BIN) $(B)/kbench shiplibs

host-tests: $(HOST_TEST_BIN) $(B)/kbench shiplibs

# As many jobs as the machine has cores, for the commands a new user types.
NPROC := $(shell nproc 2>/dev/null || echo 2)

# What the build, the tests and the checks need, installed when missing.
deps-build deps-test deps-check:
	@bash .ci/deps $(@:deps-%=%) $(CUDA)

test: deps-test
	@$(MAKE) --no-print-directory -j$(NPROC) tests
	bash tests/run.sh $(B)

# Host code and host tests under AddressSanitizer and UBSan, in a build folder
# of their own (the CUDA objects are the plain build's: nvcc's, as always); the GPU tests are
# memcheck's. protect_shadow_gap=0: the CUDA runtime maps memory where ASan's
# shadow gap would be.
ASAN_B     := build-asan
ASAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
asan:
	$(MAKE) B=$(ASAN_B) CU_B=$(B) SAN="$(ASAN_FLAGS)" host-tests
	ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 bash tests/run.sh $(ASAN_B)

# The GPU tests under compute-sanitizer's memcheck (the counter tests skip: the
# sanitizer holds the GPU's tools interface). Skips, saying so, without a GPU.
SANITIZER ?= $(CUDA)/bin/compute-sanitizer
memcheck: tests
	@if ! $(B)/kbench devices >/dev/null 2>&1; then \
	  echo "memcheck: no GPU on this machine; the GPU tests were not run"; exit 0; fi; \
	if [ ! -x "$(SANITIZER)" ]; then \
	  echo "memcheck: no compute-sanitizer at $(SANITIZER) (SANITIZER=PATH names it)"; \
	  exit 3; fi; \
	for t in $(GPU_TEST_BIN); do \
	  echo "memcheck: $$t"; \
	  KBENCH_TEST_NO_COUNTERS=1 "$(SANITIZER)" --tool memcheck --leak-check full \
	    --error-exitcode 1 "$$t" || exit 1; \
	done; echo "memcheck: no errors"

# The main job: the softmax ladder on this machine's GPU, or, without one, the
# committed H200 report.
run: deps-build
	@$(MAKE) --no-print-directory -j$(NPROC) all
	@if $(B)/kbench devices >/dev/null 2>&1; then \
	  $(B)/kbench run softmax --variants all; \
	else \
	  echo "kbench: no GPU on this machine, so nothing can be measured here."; \
	  echo "kbench: showing the committed H200 report, results/h200/softmax.json:"; \
	  echo; \
	  $(B)/kbench report results/h200/softmax.json; \
	fi

check: deps-check
	cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
	  --std=c11 --suppress=missingIncludeSystem --inline-suppr -Isrc src tests
	bash tests/banned.sh
	bash tests/layers.sh

# clang-tidy over the C sources with .clang-tidy's checks (slow: a minute or two).
tidy: $(B)/shim/string
	clang-tidy --quiet $(wildcard src/*/*.c) -- -std=c17 $(CPPFLAGS) 2>/dev/null

clean:
	rm -rf $(B) $(ASAN_B)

.PHONY: all run test tests host-tests asan memcheck check tidy clean shiplibs deps-build \
        deps-test deps-check
.SECONDARY:

-include $(LIB_O:.o=.d) $(CLI_O:.o=.d)
