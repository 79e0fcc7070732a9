# memtrace: a heap allocation profiler for Linux.
#
#   make            build build/memtrace and build/libmtpreload.so
#   make check      build and run the whole test suite
#   make sanitize   the suite again under AddressSanitizer and UBSan
#   make fuzz       the libFuzzer target for FUZZ_SECONDS (default 60)
#   make bench      the benchmarks (by hand, never in check)
#   make install PREFIX=/usr/local   (also the man pages, the bash
#                   completion, the docs and examples under share/)
#   make V=1 ...    show the commands

PREFIX ?= /usr/local
BUILD ?= build
V ?= 0

CC ?= cc
PKG_CONFIG ?= pkg-config
OPTFLAGS ?= -O2 -g
SANFLAGS ?=
# Environment of the test runner, e.g. TEST_ENV='CK_RUN_SUITE=clock'.
TEST_ENV ?=
# The unwinder of every process the tests trace (MEMTRACE_UNWIND), e.g.
# make check UNWIND=verify: both unwinders compared on every event.
UNWIND ?=

# The builds of make, make check, make sanitize and make fuzz use every
# core (their sub-make gets -j$(JOBS)); the tests still run one at a time
# (some time what they test, and a busy core would stretch the others).
# A -j of the caller's own wins: make -j1 check.
JOBS ?= $(shell nproc 2>/dev/null || echo 1)
SUBJOBS = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(JOBS))

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
# libdw (elfutils) resolves source lines for report and flamegraph.
LIBDW_CFLAGS = $(shell $(PKG_CONFIG) --cflags libdw 2>/dev/null)
LIBDW_LIBS = $(shell $(PKG_CONFIG) --libs libdw 2>/dev/null)
# libstdc++'s __cxa_demangle names C++ frames as people write them
# (analyzer/model/mt_demangle.c); libstdc++.so.6 comes with g++.
DEMANGLE_LIBS = -lstdc++
# libzstd and zlib decompress zstd and gzip traces as the analyzer reads
# them (format.md section 2.1); the collector writes zstd with libzstd.
COMPRESS_CFLAGS = $(shell $(PKG_CONFIG) --cflags libzstd zlib 2>/dev/null)
COMPRESS_LIBS = $(shell $(PKG_CONFIG) --libs libzstd zlib 2>/dev/null)

WARN = -Wall -Wextra -Werror
CFLAGS_BASE = -std=gnu11 $(OPTFLAGS) $(WARN) -MMD -MP \
	-D_GNU_SOURCE -DMT_SOURCE_DIR='"$(CURDIR)"' -DMT_BUILD_DIR='"$(abspath $(BUILD))"' \
	$(CFLAGS)
CFLAGS_ALL = $(CFLAGS_BASE) $(SANFLAGS)
LDFLAGS_ALL = $(SANFLAGS) $(LDFLAGS)

COMMON_SRC = common/mt_fmt.c common/mt_event.c common/mt_jsonl.c common/mt_utf8.c
# The analyzer, a folder a layer (docs/analyzer.md): base (memory, buffers,
# maps, outputs, units), read, parse, model, rows, gates, render, export,
# and cmd (the command framework and a file a command).  Each folder is
# taken whole; main.c is the executable's alone.
ANALYZER_DIRS = base read parse model rows gates render export cmd
ANALYZER_SRC = $(foreach d,$(ANALYZER_DIRS),$(wildcard analyzer/$(d)/*.c))
# The scripts and style sheets of the HTML report and the flame graph's
# SVG, embedded by the assembler (analyzer/render/mt_html_assets.S).
HTML_ASSETS = analyzer/render/html/report.js analyzer/render/html/report.css \
	analyzer/render/html/flame.js analyzer/render/html/flame.css
PRELOAD_SRC = preload/mt_hooks.c preload/mt_api_hooks.c preload/mt_api.c \
	preload/mt_real.c preload/mt_trace.c preload/mt_exe.c preload/mt_settings.c preload/mt_name.c preload/mt_output.c \
	preload/mt_declare.c preload/mt_lock.c preload/mt_say.c \
	preload/mt_record.c preload/mt_spawn.c preload/mt_stack.c preload/mt_table.c \
	preload/mt_symbol.c preload/mt_elf.c preload/mt_clock.c preload/mt_signal.c \
	preload/mt_sample.c preload/mt_unwind_lib.c preload/mt_unwind_sys.c preload/mt_unwind_cache.c preload/mt_nofd.c preload/mt_child_stack.c \
	preload/mt_prefault.c preload/mt_namecache.c preload/mt_spares.c \
	preload/mt_unwind_share.c preload/mt_forkmap.c \
	common/mt_fmt.c common/mt_event.c \
	common/mt_jsonl.c common/mt_utf8.c
# The collector: the process that drains a traced program's ring into its
# trace (docs/preload.md, "The write path").
COLLECTOR_SRC = collector/mt_out.c collector/mt_zpool.c collector/mt_lines.c collector/mt_batch.c collector/mt_collect.c collector/mt_drainer.c \
	collector/mt_server.c
TEST_SRC = tests/mt_tests.c tests/mt_test_jobs.c tests/mt_test.c tests/mt_test_trace.c tests/mt_test_parse.c \
	$(wildcard tests/check_*.c)

OBJ = $(BUILD)/obj
COMMON_OBJ = $(COMMON_SRC:%.c=$(OBJ)/%.o)
ANALYZER_OBJ = $(ANALYZER_SRC:%.c=$(OBJ)/%.o) $(OBJ)/analyzer/render/mt_html_assets.o
COLLECTOR_OBJ = $(COLLECTOR_SRC:%.c=$(OBJ)/%.o)
TEST_OBJ = $(TEST_SRC:%.c=$(OBJ)/%.o)
# The preload is position-independent and exports only its hooks (the libc
# overrides and the entry points of include/memtrace.h).  It is
# never built with the sanitizers: their runtime must come first in a
# process, and the traced programs are not built with them.
PIC = $(BUILD)/obj-pic
PRELOAD_OBJ = $(PRELOAD_SRC:%.c=$(PIC)/%.o)
UNWIND_CFLAGS = $(shell $(PKG_CONFIG) --cflags libunwind 2>/dev/null)
UNWIND_LIBS = $(shell $(PKG_CONFIG) --libs libunwind 2>/dev/null)

MEMTRACE = $(BUILD)/memtrace
PRELOAD = $(BUILD)/libmtpreload.so
COLLECTOR = $(BUILD)/memtrace-collector
# The preload's core without its hooks, for tests that drive it directly.
LIBCORE = $(BUILD)/libmtcore.a
# (built like the analyzer, sanitizers included under make sanitize).
CORE_OBJ = $(patsubst %.c,$(OBJ)/%.o,$(filter-out preload/mt_hooks.c preload/mt_api_hooks.c common/%,$(PRELOAD_SRC)))
LIBANALYZER = $(BUILD)/libmtanalyzer.a
TESTS = $(BUILD)/mt-tests
BENCH_GEN = $(BUILD)/mt-gen-trace
BENCH_PARSE = $(BUILD)/mt-bench-parse
# The man pages and the bash completion, and their maker (below).
MKMAN = $(BUILD)/mt-mkman
MAN_SRC = $(wildcard man/*.txt)
MAN_DIR = $(BUILD)/man
MAN_STAMP = $(MAN_DIR)/.made
COMPLETION = $(BUILD)/completion/memtrace

# Small programs the tests run under the preload: plain -O0 -g builds so
# their stacks and symbols are what the source says.
WORKLOAD_C = $(wildcard tests/workloads/*.c)
WORKLOAD_CXX = $(wildcard tests/workloads/*.cpp)
WORKLOAD_SO = $(wildcard tests/workloads/so/*.c)
# tests/workloads/o2/: programs built -O2 -g, as users build theirs, for
# what only an optimised build has (calls inlined several levels deep).
WORKLOAD_O2_C = $(wildcard tests/workloads/o2/*.c)
WORKLOAD_O2_CXX = $(wildcard tests/workloads/o2/*.cpp)
WORKLOADS = $(WORKLOAD_C:tests/workloads/%.c=$(BUILD)/workloads/%) \
	$(WORKLOAD_CXX:tests/workloads/%.cpp=$(BUILD)/workloads/%) \
	$(WORKLOAD_SO:tests/workloads/so/%.c=$(BUILD)/workloads/lib%.so) \
	$(WORKLOAD_O2_C:tests/workloads/o2/%.c=$(BUILD)/workloads/o2/%) \
	$(WORKLOAD_O2_CXX:tests/workloads/o2/%.cpp=$(BUILD)/workloads/o2/%)
CXX ?= g++

$(BUILD)/workloads/%: tests/workloads/%.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) -std=gnu11 -O0 -g -fno-omit-frame-pointer $(WARN) \
		-o $@ $< -pthread -ldl

# The programs of include/memtrace.h, built as a user would build them:
# with -I include alone, linking nothing of memtrace's (no -ldl either).
API_WORKLOADS = $(BUILD)/workloads/mt_pool $(BUILD)/workloads/mt_pool_threads
$(API_WORKLOADS): $(BUILD)/workloads/%: tests/workloads/%.c include/memtrace.h
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) -std=gnu11 -O0 -g -fno-omit-frame-pointer $(WARN) \
		-I include -o $@ $< -pthread

$(BUILD)/workloads/lib%.so: tests/workloads/so/%.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) -std=gnu11 -O0 -g -fPIC -shared $(WARN) -o $@ $<

$(BUILD)/workloads/o2/%: tests/workloads/o2/%.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) -std=gnu11 -O2 -g $(WARN) -o $@ $<

$(BUILD)/workloads/o2/%: tests/workloads/o2/%.cpp
	@mkdir -p $(dir $@)
	$(call say,CXX,$<)$(CXX) -O2 -g $(WARN) -o $@ $<

$(BUILD)/workloads/%: tests/workloads/%.cpp
	@mkdir -p $(dir $@)
	$(call say,CXX,$<)$(CXX) -O0 -g -fno-omit-frame-pointer $(WARN) -o $@ $<

.PHONY: all deps check sanitize install clean bench demo

# The README's main job: three runs of the demo workload with memtrace-run
# (told which build to use), then run 1's report, its HTML report and its
# flame graph, and the commands that open them.
DEMO_DIR = $(BUILD)/demo
DEMO_TRACE = $(DEMO_DIR)/allocations.1.jsonl.zst
demo: all
	$(Q)$(MAKE) --no-print-directory $(SUBJOBS) $(BUILD)/workloads/wl_demo
	$(Q)MEMTRACE_ANALYZER=$(abspath $(MEMTRACE)) MEMTRACE_PRELOAD=$(abspath $(PRELOAD)) \
		scripts/memtrace-run -n 3 -o $(DEMO_DIR) -- $(BUILD)/workloads/wl_demo
	$(Q)echo
	$(Q)$(MEMTRACE) report $(DEMO_TRACE) --top 1
	$(Q)$(MEMTRACE) html $(DEMO_TRACE) -o $(DEMO_DIR)/report.html
	$(Q)$(MEMTRACE) flamegraph $(DEMO_TRACE) --metric peak -o $(DEMO_DIR)/peak.svg
	$(Q)printf '\n%s\n  %s\n  %s\n  %s\n' \
		"Next:" \
		"xdg-open $(DEMO_DIR)/report.html      # the HTML report: heap over time, flame graph, sites" \
		"xdg-open $(DEMO_DIR)/peak.svg         # the flame graph of the peak's stacks: click to zoom" \
		"$(MEMTRACE) report $(DEMO_TRACE)   # every site"
.DEFAULT_GOAL := all

all: deps
	$(Q)$(MAKE) --no-print-directory $(SUBJOBS) build-all

deps:
	$(Q)sh scripts/install-deps

.PHONY: build-all
build-all: $(MEMTRACE) $(PRELOAD) $(COLLECTOR) $(MAN_STAMP) $(COMPLETION)
	@:

# The man pages and the bash completion, made by mt-mkman (man/mt_mkman.c)
# from the texts --help prints: each command's usage in the table, the
# page sources of man/ (memtrace(1), memtrace-run(1) with the script's
# --help, libmtpreload(7) with docs/preload.md's Environment table), so
# they cannot disagree.  The pages are remade together: which there are
# is the command table's to say.
# The memtrace-run whose --help mt-mkman reads, told which analyzer to use.
RUN_HELP = MEMTRACE_ANALYZER=$(abspath $(MEMTRACE)) scripts/memtrace-run --help
# mt-mkman, a build tool that ends as soon as it is done, frees nothing:
# under make sanitize, LeakSanitizer is told so.
MKMAN_RUN = ASAN_OPTIONS=detect_leaks=0 $(MKMAN)

$(MKMAN): $(patsubst %.c,$(OBJ)/%.o,$(wildcard man/*.c)) $(LIBANALYZER)
	$(call say,LINK,$@)$(CC) $(LDFLAGS_ALL) -o $@ $^ $(JSONC_LIBS) $(LIBDW_LIBS) $(DEMANGLE_LIBS) \
		$(COMPRESS_LIBS) -lpthread -lm

$(MAN_STAMP): $(MKMAN) $(MEMTRACE) $(MAN_SRC) docs/preload.md scripts/memtrace-run
	$(Q)rm -rf $(MAN_DIR) && mkdir -p $(MAN_DIR)
	$(call say,MKMAN,$(MAN_DIR))MEMTRACE=$(abspath $(MEMTRACE)) \
		MEMTRACE_ANALYZER=$(abspath $(MEMTRACE)) $(MKMAN_RUN) pages $(MAN_DIR) $(MAN_SRC)
	$(Q)touch $@

$(COMPLETION): $(MKMAN) $(MEMTRACE) scripts/memtrace-run
	@mkdir -p $(dir $@)
	$(call say,MKMAN,$@)$(MKMAN_RUN) completion '$(RUN_HELP)' > $@.tmp && mv $@.tmp $@

$(OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS_ALL) $(JSONC_CFLAGS) $(CHECK_CFLAGS) $(UNWIND_CFLAGS) \
		$(LIBDW_CFLAGS) $(COMPRESS_CFLAGS) -c $< -o $@

$(OBJ)/analyzer/render/mt_html_assets.o: analyzer/render/mt_html_assets.S $(HTML_ASSETS)
	@mkdir -p $(dir $@)
	$(call say,AS,$<)$(CC) $(CFLAGS_ALL) -c $< -o $@

# The preload is optimized across its files at link time: its hot path
# crosses the hooks, the core, the clock, the stack tables and the line
# formatter on every event, and inlining across them took 0.95 to 0.97 of
# the churn's time (docs/performance.md).  PRELOAD_LTO= turns it off.
PRELOAD_LTO ?= -flto=auto
$(PIC)/%.o: %.c
	@mkdir -p $(dir $@)
	$(call say,CCPIC,$<)$(CC) $(CFLAGS_BASE) $(PRELOAD_LTO) -fPIC -fvisibility=hidden \
		-ftls-model=initial-exec $(UNWIND_CFLAGS) -c $< -o $@

# The preload, the collector and memtrace are linked aside and renamed
# into place: a program traced meanwhile (a test suite beside the build,
# a user's workload) loads the old file or the new, never a part-written
# one ("file too short").  --sort-section=name puts the preload's big
# arrays (".bss.mt_apart", then the cold ".bss.mt_cold":
# preload/mt_layout.h) after its small variables, which then share the
# one page a fork copies.
$(PRELOAD): $(PRELOAD_OBJ)
	$(call say,LINK,$@)$(CC) $(OPTFLAGS) $(WARN) $(PRELOAD_LTO) $(LDFLAGS) -shared \
		-Wl,-z,defs -Wl,-z,now -Wl,--sort-section=name -o $@.tmp $^ -ldl -lpthread && mv -f $@.tmp $@

$(LIBCORE): $(CORE_OBJ)
	$(call say,AR,$@)$(AR) rcs $@ $^

$(LIBANALYZER): $(COMMON_OBJ) $(ANALYZER_OBJ)
	$(call say,AR,$@)$(AR) rcs $@ $^

$(MEMTRACE): $(OBJ)/analyzer/main.o $(LIBANALYZER)
	$(call say,LINK,$@)$(CC) $(LDFLAGS_ALL) -o $@.tmp $^ $(JSONC_LIBS) $(LIBDW_LIBS) $(DEMANGLE_LIBS) \
		$(COMPRESS_LIBS) -lpthread -lm && mv -f $@.tmp $@

$(COLLECTOR): $(OBJ)/collector/main.o $(COLLECTOR_OBJ) $(COMMON_OBJ)
	$(call say,LINK,$@)$(CC) $(LDFLAGS_ALL) -o $@.tmp $^ $(COMPRESS_LIBS) && mv -f $@.tmp $@

$(TESTS): $(TEST_OBJ) $(COLLECTOR_OBJ) $(LIBCORE) $(LIBANALYZER)
	$(call say,LINK,$@)$(CC) $(LDFLAGS_ALL) -o $@ $^ $(CHECK_LIBS) $(JSONC_LIBS) \
		$(LIBDW_LIBS) $(DEMANGLE_LIBS) $(COMPRESS_LIBS) $(UNWIND_LIBS) -ldl -lpthread -lm

$(BENCH_GEN): $(OBJ)/bench/mt_gen_trace.o $(LIBANALYZER)
	$(call say,LINK,$@)$(CC) $(LDFLAGS_ALL) -o $@ $^ $(JSONC_LIBS) $(COMPRESS_LIBS) $(DEMANGLE_LIBS) -lpthread -lm

$(BENCH_PARSE): $(OBJ)/bench/mt_bench_parse.o $(LIBANALYZER)
	$(call say,LINK,$@)$(CC) $(LDFLAGS_ALL) -o $@ $^ $(JSONC_LIBS) $(COMPRESS_LIBS) $(DEMANGLE_LIBS) -lpthread -lm

# One suite alone: make one-suite SUITE=cli [BUILD=/tmp/mine]
.PHONY: one-suite
one-suite: $(MEMTRACE) $(PRELOAD) $(COLLECTOR) $(WORKLOADS) $(LIBCORE) $(LIBANALYZER) $(COLLECTOR_OBJ)
	@mkdir -p $(OBJ)/tests
	$(call say,LINK,$(BUILD)/mt-suite-$(SUITE))$(CC) $(CFLAGS_ALL) $(JSONC_CFLAGS) $(CHECK_CFLAGS) \
		$(COMPRESS_CFLAGS) \
		-DMT_ONLY_SUITE=$(SUITE) -o $(BUILD)/mt-suite-$(SUITE) tests/mt_test_one.c \
		tests/mt_test.c tests/mt_test_trace.c tests/mt_test_parse.c tests/check_$(SUITE).c $(COLLECTOR_OBJ) $(LIBCORE) $(LIBANALYZER) $(CHECK_LIBS) \
		$(JSONC_LIBS) $(LIBDW_LIBS) $(DEMANGLE_LIBS) $(COMPRESS_LIBS) $(UNWIND_LIBS) -ldl -lpthread -lm
	$(Q)$(BUILD)/mt-suite-$(SUITE)

check: deps
	$(Q)$(MAKE) --no-print-directory $(SUBJOBS) run-tests

.PHONY: run-tests
run-tests: $(MEMTRACE) $(PRELOAD) $(COLLECTOR) $(MAN_STAMP) $(COMPLETION) $(WORKLOADS) $(TESTS)
	$(call say,TEST,$(TESTS))$(if $(UNWIND),MEMTRACE_UNWIND=$(UNWIND)) $(TEST_ENV) $(TESTS)

# The same suite in its own build tree, with the sanitizers on.  ASan's leak
# checker runs at exit of every test process.  Everything runs some times
# slower, so every tcase's timeout (there to end a hang, tests/mt_test.h)
# is three times as long.  ASan's allocator gives memory back to the
# system on a timer it reads with clock_gettime(), in whichever thread
# frees: in the tests' threads that forbid RDTSC (prctl PR_TSC_SIGSEGV)
# the vDSO's RDTSC then kills the sanitizer, not memtrace, so the timer
# is off.  TEST_ENV is passed on, as for make check.
sanitize: deps
	$(Q)$(MAKE) --no-print-directory $(SUBJOBS) run-tests BUILD=build-sanitize \
		OPTFLAGS='-O1 -g -fno-omit-frame-pointer' \
		SANFLAGS='-fsanitize=address,undefined -fno-sanitize-recover=all' \
		TEST_ENV='CK_TIMEOUT_MULTIPLIER=3 ASAN_OPTIONS=allocator_release_to_os_interval_ms=-1 $(TEST_ENV)'

# The libFuzzer target of tests/fuzz/ (clang), run for FUZZ_SECONDS from a
# corpus in build-fuzz/ seeded from fixtures/: make fuzz FUZZ_SECONDS=60.
# Warnings are not errors here: gcc's builds hold -Werror, and clang warns
# of other things.
FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang
FUZZER = $(BUILD)/fuzz-trace
.PHONY: fuzz run-fuzz
FUZZ_BUILD ?= build-fuzz
fuzz:
	$(Q)sh scripts/install-deps fuzz
	$(Q)$(MAKE) --no-print-directory $(SUBJOBS) run-fuzz BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) \
		OPTFLAGS='-O1 -g -fno-omit-frame-pointer' \
		SANFLAGS='-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=all'

$(FUZZER): $(OBJ)/tests/fuzz/fuzz_trace.o $(LIBANALYZER)
	$(call say,LINK,$@)$(CC) $(LDFLAGS_ALL) -fsanitize=fuzzer -o $@ $^ $(JSONC_LIBS) $(LIBDW_LIBS) $(DEMANGLE_LIBS) \
		$(COMPRESS_LIBS) -lpthread -lm

run-fuzz: $(FUZZER)
	$(Q)sh tests/fuzz/run-fuzz $(FUZZER) $(FUZZ_SECONDS) $(BUILD)

# The browser tests (tests/browser/run.js): the HTML report, the plot and
# the speedscope and DHAT exports opened in Debian's Chromium by
# puppeteer-core, offline.  Installs Chromium (install-deps browser) and
# the npm packages of tests/browser/package-lock.json, then runs them.
.PHONY: browser-check
browser-check: deps
	$(Q)sh scripts/install-deps browser
	$(Q)$(MAKE) --no-print-directory $(SUBJOBS) $(MEMTRACE) $(PRELOAD) $(COLLECTOR) \
		$(BUILD)/workloads/wl_demo
	$(Q)cd tests/browser && npm ci --no-audit --no-fund --loglevel=error >/dev/null
	$(call say,TEST,browser)node tests/browser/run.js $(BUILD)

# The README's picture of the HTML report (docs/html-report.png), from a
# real run of wl_demo, taken by the browser tests.
.PHONY: html-screenshot
html-screenshot: browser-check
	$(Q)node tests/browser/run.js $(BUILD) --screenshot docs/html-report.png >/dev/null

# The preload benchmark's workloads (bench/run-preload-bench), and the
# start benches' probe of page costs: built -O2 -g like a user's program,
# not like the tests' -O0 workloads.
BENCH_PROGS = $(BUILD)/mt-churn $(BUILD)/mt-deep $(BUILD)/mt-pingpong $(BUILD)/mt-pagecost
$(BUILD)/mt-churn $(BUILD)/mt-deep $(BUILD)/mt-pingpong $(BUILD)/mt-pagecost: $(BUILD)/mt-%: bench/mt_%.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) -std=gnu11 -O2 -g $(WARN) -o $@ $< -pthread

# The collector's drain alone, on a recorded ring (bench/run-collector-bench).
BENCH_COLLECT = $(BUILD)/mt-bench-collect
$(BENCH_COLLECT): $(OBJ)/bench/mt_bench_collect.o $(COLLECTOR_OBJ) $(COMMON_OBJ)
	$(call say,LINK,$@)$(CC) $(LDFLAGS_ALL) -Wl,--wrap=mt_out_room,--wrap=mt_out_put \
		-o $@ $^ $(COMPRESS_LIBS) -lpthread

# make bench BENCH=analyzer|preload|sample|collector|start runs one part;
# the default, all of them.  BENCH=billion (the analyzer on a streamed
# trace of a billion events, minutes long) runs only when named.
BENCH ?= all
bench: deps
	$(Q)case '$(BENCH)' in all|analyzer|preload|sample|collector|start|billion) ;; \
	*) echo "make bench: BENCH is all, analyzer, preload, sample, collector, start or billion, not '$(BENCH)'" >&2; exit 64 ;; esac
ifeq ($(BENCH),billion)
	$(Q)$(MAKE) --no-print-directory $(MEMTRACE) $(BENCH_GEN)
	$(Q)sh bench/run-billion-bench $(BUILD)
endif
ifneq ($(filter $(BENCH),all analyzer),)
	$(Q)$(MAKE) --no-print-directory $(MEMTRACE) $(BENCH_GEN) $(BENCH_PARSE) \
		$(BUILD)/mt-pingpong
	$(Q)sh bench/run-analyzer-bench $(BUILD)
endif
ifneq ($(filter $(BENCH),all preload),)
	$(Q)$(MAKE) --no-print-directory $(MEMTRACE) $(PRELOAD) $(COLLECTOR) $(BENCH_PROGS) $(BENCH_PARSE)
	$(Q)sh bench/run-preload-bench $(BUILD)
endif
ifneq ($(filter $(BENCH),all sample),)
	$(Q)$(MAKE) --no-print-directory $(MEMTRACE) $(PRELOAD) $(COLLECTOR) \
		$(OBJ)/bench/mt_sample_spread.o
	$(call say,LINK,$(BUILD)/mt-sample-spread)$(CC) $(LDFLAGS_ALL) -o $(BUILD)/mt-sample-spread \
		$(OBJ)/bench/mt_sample_spread.o $(LIBANALYZER) $(JSONC_LIBS) $(COMPRESS_LIBS) $(DEMANGLE_LIBS) -lpthread -lm
	$(Q)sh bench/run-sample-bench $(BUILD)
endif
ifneq ($(filter $(BENCH),all collector),)
	$(Q)$(MAKE) --no-print-directory $(MEMTRACE) $(PRELOAD) $(COLLECTOR) $(BENCH_COLLECT) \
		$(BUILD)/mt-pingpong
	$(Q)sh bench/run-collector-bench $(BUILD)
endif
ifneq ($(filter $(BENCH),all start),)
	$(Q)$(MAKE) --no-print-directory $(MEMTRACE) $(PRELOAD) $(COLLECTOR) $(BUILD)/mt-pagecost
	$(Q)sh bench/run-start-bench $(BUILD)
endif

# What make install puts under share/doc/memtrace: the README, docs/ (its
# pictures too, so the pages' links hold), and the example of memtrace.h,
# a program's own pool reported through it.
DOC_FILES = $(wildcard docs/*.md docs/*.png docs/*.svg)
EXAMPLES = tests/workloads/mt_pool.c

install: all
	$(call say,INSTALL,$(PREFIX))install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib
	$(Q)install -m 755 $(MEMTRACE) $(DESTDIR)$(PREFIX)/bin/memtrace
	$(Q)install -m 644 $(PRELOAD) $(DESTDIR)$(PREFIX)/lib/libmtpreload.so
	$(Q)install -d $(DESTDIR)$(PREFIX)/libexec/memtrace
	$(Q)install -m 755 $(COLLECTOR) $(DESTDIR)$(PREFIX)/libexec/memtrace/memtrace-collector
	$(Q)install -m 755 scripts/memtrace-run $(DESTDIR)$(PREFIX)/bin/memtrace-run
	$(Q)install -d $(DESTDIR)$(PREFIX)/include
	$(Q)install -m 644 include/memtrace.h $(DESTDIR)$(PREFIX)/include/memtrace.h
	$(Q)install -d $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man7
	$(Q)install -m 644 $(MAN_DIR)/*.1 $(DESTDIR)$(PREFIX)/share/man/man1
	$(Q)install -m 644 $(MAN_DIR)/*.7 $(DESTDIR)$(PREFIX)/share/man/man7
	$(Q)install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	$(Q)install -m 644 $(COMPLETION) $(DESTDIR)$(PREFIX)/share/bash-completion/completions/memtrace
	$(Q)install -m 644 $(COMPLETION) $(DESTDIR)$(PREFIX)/share/bash-completion/completions/memtrace-run
	$(Q)install -d $(DESTDIR)$(PREFIX)/share/doc/memtrace/docs \
		$(DESTDIR)$(PREFIX)/share/doc/memtrace/examples
	$(Q)install -m 644 README.md $(DESTDIR)$(PREFIX)/share/doc/memtrace/README.md
	$(Q)install -m 644 $(DOC_FILES) $(DESTDIR)$(PREFIX)/share/doc/memtrace/docs
	$(Q)install -m 644 $(EXAMPLES) $(DESTDIR)$(PREFIX)/share/doc/memtrace/examples

clean:
	$(call say,CLEAN,build)rm -rf build build-sanitize build-fuzz

-include $(wildcard $(OBJ)/*/*.d $(OBJ)/*/*/*.d $(PIC)/*/*.d)
