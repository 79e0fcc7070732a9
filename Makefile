# memtrace: a heap allocation profiler for Linux.
#
#   make            build build/memtrace and build/libmtpreload.so
#   make check      build and run the whole test suite
#   make sanitize   the suite again under AddressSanitizer and UBSan
#   make bench      the benchmarks (by hand, never in check)
#   make install PREFIX=/usr/local
#   make V=1 ...    show the commands

PREFIX ?= /usr/local
BUILD ?= build
V ?= 0

CC ?= cc
PKG_CONFIG ?= pkg-config
OPTFLAGS ?= -O2 -g
SANFLAGS ?=

ifeq ($(V),0)
Q = @
say = @printf '  %-8s %s\n' $(1) $(2);
else
Q =
say =
endif

# pkg-config is asked lazily (=): on a fresh machine the packages only
# exist once the deps step has run.
JSONC_CFLAGS = $(shell $(PKG_CONFIG) --cflags json-c 2>/dev/null)
JSONC_LIBS = $(shell $(PKG_CONFIG) --libs json-c 2>/dev/null)
CHECK_CFLAGS = $(shell $(PKG_CONFIG) --cflags check 2>/dev/null)
CHECK_LIBS = $(shell $(PKG_CONFIG) --libs check 2>/dev/null)

WARN = -Wall -Wextra -Werror
CFLAGS_ALL = -std=gnu11 $(OPTFLAGS) $(WARN) $(SANFLAGS) -MMD -MP \
	-D_GNU_SOURCE -DMT_SOURCE_DIR='"$(CURDIR)"' -DMT_BUILD_DIR='"$(abspath $(BUILD))"' \
	$(CFLAGS)
LDFLAGS_ALL = $(SANFLAGS) $(LDFLAGS)

COMMON_SRC = common/mt_fmt.c common/mt_event.c
ANALYZER_SRC = analyzer/mt_mem.c analyzer/mt_buf.c analyzer/mt_map.c \
	analyzer/mt_reader.c analyzer/mt_parse.c analyzer/mt_integrity.c \
	analyzer/mt_heap.c analyzer/mt_analysis.c analyzer/mt_summary.c \
	analyzer/mt_rows.c analyzer/mt_output.c analyzer/mt_cli.c
TEST_SRC = tests/mt_tests.c tests/mt_test.c $(wildcard tests/check_*.c)

OBJ = $(BUILD)/obj
COMMON_OBJ = $(COMMON_SRC:%.c=$(OBJ)/%.o)
ANALYZER_OBJ = $(ANALYZER_SRC:%.c=$(OBJ)/%.o)
TEST_OBJ = $(TEST_SRC:%.c=$(OBJ)/%.o)

MEMTRACE = $(BUILD)/memtrace
LIBANALYZER = $(BUILD)/libmtanalyzer.a
TESTS = $(BUILD)/mt-tests
BENCH_GEN = $(BUILD)/mt-gen-trace

.PHONY: all deps check sanitize install clean bench demo
.DEFAULT_GOAL := all

all: deps
	$(Q)$(MAKE) --no-print-directory build-all

deps:
	$(Q)sh scripts/install-deps

.PHONY: build-all
build-all: $(MEMTRACE)

$(OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS_ALL) $(JSONC_CFLAGS) $(CHECK_CFLAGS) -c $< -o $@

$(LIBANALYZER): $(COMMON_OBJ) $(ANALYZER_OBJ)
	$(call say,AR,$@)$(AR) rcs $@ $^

$(MEMTRACE): $(OBJ)/analyzer/main.o $(LIBANALYZER)
	$(call say,LINK,$@)$(CC) $(LDFLAGS_ALL) -o $@ $^ $(JSONC_LIBS)

$(TESTS): $(TEST_OBJ) $(LIBANALYZER)
	$(call say,LINK,$@)$(CC) $(LDFLAGS_ALL) -o $@ $^ $(CHECK_LIBS) $(JSONC_LIBS)

$(BENCH_GEN): $(OBJ)/bench/mt_gen_trace.o $(LIBANALYZER)
	$(call say,LINK,$@)$(CC) $(LDFLAGS_ALL) -o $@ $^ $(JSONC_LIBS)

# One suite alone: make one-suite SUITE=cli [BUILD=/tmp/mine]
.PHONY: one-suite
one-suite: $(MEMTRACE) $(LIBANALYZER)
	@mkdir -p $(OBJ)/tests
	$(call say,LINK,$(BUILD)/mt-suite-$(SUITE))$(CC) $(CFLAGS_ALL) $(JSONC_CFLAGS) $(CHECK_CFLAGS) \
		-DMT_ONLY_SUITE=$(SUITE) -o $(BUILD)/mt-suite-$(SUITE) tests/mt_test_one.c \
		tests/mt_test.c tests/check_$(SUITE).c $(LIBANALYZER) $(CHECK_LIBS) $(JSONC_LIBS)
	$(Q)$(BUILD)/mt-suite-$(SUITE)

check: deps
	$(Q)$(MAKE) --no-print-directory run-tests

.PHONY: run-tests
run-tests: $(MEMTRACE) $(TESTS)
	$(call say,TEST,$(TESTS))$(TESTS)

# The same suite in its own build tree, with the sanitizers on.  ASan's leak
# checker runs at exit of every test process.
sanitize: deps
	$(Q)$(MAKE) --no-print-directory run-tests BUILD=build-sanitize \
		OPTFLAGS='-O1 -g -fno-omit-frame-pointer' \
		SANFLAGS='-fsanitize=address,undefined -fno-sanitize-recover=all'

bench: deps
	$(Q)$(MAKE) --no-print-directory $(MEMTRACE) $(BENCH_GEN)
	$(Q)sh bench/run-analyzer-bench $(BUILD)

install: all
	$(call say,INSTALL,$(PREFIX))install -d $(DESTDIR)$(PREFIX)/bin
	$(Q)install -m 755 $(MEMTRACE) $(DESTDIR)$(PREFIX)/bin/memtrace

clean:
	$(call say,CLEAN,build)rm -rf build build-sanitize

-include $(wildcard $(OBJ)/*/*.d)
