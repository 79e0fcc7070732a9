/*
 * check_unwind: the fast unwinder (preload/mt_unwind_cache.c) gives the
 * stacks libunwind gives.  Each test runs a program under
 * MEMTRACE_UNWIND=verify, which walks every event's stack with both and
 * says so on the first difference: the test asserts no difference was
 * said, that the fast walker walked (MEMTRACE_STATS=1's unwind line), and
 * that every trace is complete.  The programs are the stacks that break
 * unwinders: longjmp, swapcontext, sigaltstack, C++ exceptions, threads,
 * deep recursion, a frame rebuilt where the last walk's was, at -O0 and
 * -O2, forked children, and python3, sqlite3 and gcc compiling a file.
 * One more checks the fast walker's own stacks: a plugin loaded where an
 * unloaded one was, which libunwind's trace cache gets wrong; and another
 * that its frames name that plugin, not the unloaded one.
 *
 * The "open" case: when the preload opens libunwind (preload/
 * mt_unwind_lib.h): never for a process whose stacks the fast walker
 * takes, at the first stack it leaves to libunwind (in a signal handler:
 * the stacks then are libunwind's), before the program's dlopen and its
 * seccomp filter, never while the loader is changing its list or across
 * a fork; its per-thread blocks are no frees of the program's, and one
 * that cannot be opened ends the trace and nothing else.
 */
#include <dirent.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mt_test.h"
#include "mt_test_trace.h"
#include "../preload/mt_unwind_lib.h"

/* Run argv under the preload with MEMTRACE_UNWIND=verify (and env):
 * exit 0, no difference said, the fast walker used, a complete trace. */
static void verify_run(char *const argv[], const char *env1)
{
	char preload[4096], output[4096], *env[8];
	char *dir = mt_test_scratch(), *traces = mt_test_path(dir, "traces");
	const char *line;
	uint64_t fast = 0, slow = 0;
	mt_test_run_t r;
	int n = 0;

	mt_quiet_int_eq(mkdir(traces, 0700), 0);
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s/libmtpreload.so", mt_test_build_dir());
	snprintf(output, sizeof(output), "MEMTRACE_OUTPUT=%s/t.%%p.jsonl", traces);
	env[n++] = preload;
	env[n++] = output;
	env[n++] = "MEMTRACE_UNWIND=verify";
	env[n++] = "MEMTRACE_STATS=1";
	if (env1)
		env[n++] = (char *)env1;
	env[n] = NULL;
	mt_test_run(&r, argv, env);
	mt_quiet(r.status == 0, "%s exited %d: %s", argv[0], r.status, r.err);
	mt_quiet(!strstr(r.err, "differ"), "%s: %s", argv[0], r.err);
	line = strstr(r.err, "memtrace: unwind: fast ");
	mt_quiet(line && sscanf(line, "memtrace: unwind: fast %" SCNu64 " libunwind %" SCNu64,
				&fast, &slow) == 2,
		 "%s: no unwind line: %s", argv[0], r.err);
	mt_quiet(fast > 0, "%s: the fast walker walked no stack (%" PRIu64 " left to libunwind)",
		 argv[0], slow);
	mt_quiet(mt_test_assert_traces_complete(traces) >= 1, "%s left no trace", argv[0]);
	mt_test_run_release(&r);
	free(traces);
}

/* The workload tests/workloads/name at -O0, then at -O2, in mode. */
static void verify_both_builds(const char *name, char *mode)
{
	char o2[256];
	char *w = mt_test_workload(name), *w2;

	snprintf(o2, sizeof(o2), "o2/%s", name);
	w2 = mt_test_workload(o2);
	{
		char *argv[] = { w, mode, NULL };

		verify_run(argv, NULL);
	}
	{
		char *argv[] = { w2, mode, NULL };

		verify_run(argv, NULL);
	}
	free(w);
	free(w2);
}

START_TEST(test_longjmp_out_of_allocating_frames_unwinds_as_libunwind_does)
{
	verify_both_builds("wl_unwind", "longjmp");
}
END_TEST

START_TEST(test_swapcontext_coroutines_unwind_as_libunwind_does)
{
	verify_both_builds("wl_unwind", "swapcontext");
}
END_TEST

START_TEST(test_a_signal_handler_on_sigaltstack_unwinds_as_libunwind_does)
{
	verify_both_builds("wl_unwind", "sigaltstack");
}
END_TEST

/* Forked children, which walk with the rule table their parent filled
 * and their own previous walk inherited from it, through code the parent
 * never ran, and with plugins they load themselves. */
START_TEST(test_forked_children_unwind_as_libunwind_does)
{
	char *w = mt_test_workload("wl_forknames");
	char *argv[] = { w, NULL, NULL };

	verify_run(argv, NULL);
	argv[1] = "plugins";
	verify_run(argv, NULL);
	free(w);
}
END_TEST

START_TEST(test_eight_threads_unwind_as_libunwind_does)
{
	verify_both_builds("wl_unwind", "threads");
}
END_TEST

START_TEST(test_a_recursion_deeper_than_a_stack_unwinds_as_libunwind_does)
{
	verify_both_builds("wl_unwind", "recurse");
}
END_TEST

/* A frame rebuilt at the address of the last walk's, with the same
 * return address in its slot, under another caller: the walk must not
 * take the last walk's outer frames for this one's (the saved rbp, and
 * the frames further out, differ). */
START_TEST(test_a_frame_rebuilt_where_the_last_was_under_another_caller_unwinds_as_libunwind_does)
{
	verify_both_builds("wl_unwind", "reframe");
}
END_TEST

START_TEST(test_cxx_throw_and_catch_through_allocating_frames_unwinds_as_libunwind_does)
{
	verify_both_builds("wl_unwind_throw", NULL);
}
END_TEST

START_TEST(test_python3_unwinds_as_libunwind_does)
{
	char *argv[] = { "/usr/bin/python3", "-S", "-c",
			 "import json\n"
			 "d = {str(i): [i, str(i) * 3, {'k': i}] for i in range(60000)}\n"
			 "s = json.dumps(d)\n"
			 "e = json.loads(s)\n"
			 "print(len(sorted(e.items())))\n",
			 NULL };

	if (access(argv[0], X_OK)) {
		MT_TEST_SKIP("needs %s (not found)", argv[0]);
		return;
	}
	verify_run(argv, "PYTHONMALLOC=malloc");
}
END_TEST

START_TEST(test_sqlite3_unwinds_as_libunwind_does)
{
	char *argv[] = { "/usr/bin/sqlite3", ":memory:",
			 "create table t(a integer primary key, b text);"
			 "with recursive c(x) as (select 1 union all select x + 1 from c "
			 "where x < 30000) insert into t select x, hex(randomblob(16)) from c;"
			 "create index tb on t(b);"
			 "select count(*) from t;",
			 NULL };

	if (access(argv[0], X_OK)) {
		MT_TEST_SKIP("needs %s (not found)", argv[0]);
		return;
	}
	verify_run(argv, NULL);
}
END_TEST

/* The C compiler a file goes through: the driver, cc1 (GCC's own
 * allocators, deep recursive descent) and the assembler, each traced. */
START_TEST(test_gcc_compiling_a_file_unwinds_as_libunwind_does)
{
	static const char source[] =
		"#include <stdio.h>\n"
		"#include <stdlib.h>\n"
		"struct node { struct node *next; int key; double w[4]; };\n"
		"static struct node *push(struct node *h, int k)\n"
		"{\n"
		"\tstruct node *n = malloc(sizeof(*n));\n"
		"\tif (!n)\n\t\tabort();\n"
		"\tn->next = h;\n\tn->key = k;\n"
		"\tfor (int i = 0; i < 4; i++)\n\t\tn->w[i] = k * 0.5 + i;\n"
		"\treturn n;\n"
		"}\n"
		"int main(int argc, char **argv)\n"
		"{\n"
		"\tstruct node *h = NULL;\n"
		"\tlong sum = 0;\n"
		"\tfor (int i = 0; i < argc * 1000; i++)\n"
		"\t\th = push(h, i % 7 ? i : -i);\n"
		"\tfor (struct node *n = h; n; n = n->next)\n"
		"\t\tsum += n->key > 0 ? n->key : (long)n->w[argc % 4];\n"
		"\tprintf(\"%s %ld\\n\", argv[0], sum);\n"
		"\treturn 0;\n"
		"}\n";
	char *gcc = "/usr/bin/gcc", *dir, *src, *obj;
	char *probe[] = { gcc, "-print-prog-name=cc1", NULL };
	mt_test_run_t r;

	if (access(gcc, X_OK)) {
		MT_TEST_SKIP("needs %s (not found)", gcc);
		return;
	}
	mt_test_run(&r, probe, NULL);
	r.out[strcspn(r.out, "\n")] = '\0';
	if (r.status != 0 || r.out[0] != '/' || access(r.out, X_OK)) {
		MT_TEST_SKIP("needs gcc's cc1 (gcc -print-prog-name=cc1: '%s')", r.out);
		mt_test_run_release(&r);
		return;
	}
	mt_test_run_release(&r);
	dir = mt_test_scratch();
	src = mt_test_path(dir, "list.c");
	obj = mt_test_path(dir, "list.o");
	mt_test_write(src, source, sizeof(source) - 1);
	{
		char *argv[] = { gcc, "-O2", "-g", "-Wall", "-c", src, "-o", obj, NULL };

		verify_run(argv, NULL);
	}
	ck_assert(mt_test_exists(obj));
	free(src);
	free(obj);
}
END_TEST

/*
 * A plugin dlclosed and another dlopened at its address, whose middle
 * frame has another rule at the same offset (wl_dlreuse): the stacks of
 * both must name every frame, plugin_alloc above plugin_mid.  A rule
 * kept from the first plugin skips the second's plugin_alloc.  Under
 * MEMTRACE_UNWIND=fast, as libunwind's trace cache keeps the first
 * plugin's rule (so verify would compare the fast walker with a stale
 * stack).
 */
START_TEST(test_a_plugin_loaded_where_an_unloaded_one_was_unwinds_by_its_own_rules)
{
	char preload[4096], output[4096];
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *w = mt_test_workload("wl_dlreuse"), *text, *line, *save = NULL;
	char *argv[] = { w, NULL };
	char *env[] = { preload, output, "MEMTRACE_UNWIND=fast", NULL };
	char *symbols[512] = { 0 };
	int mids = 0;
	mt_test_run_t r;

	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s/libmtpreload.so", mt_test_build_dir());
	snprintf(output, sizeof(output), "MEMTRACE_OUTPUT=%s", trace);
	mt_test_run(&r, argv, env);
	mt_quiet(r.status == 0, "wl_dlreuse exited %d: %s", r.status, r.err);
	if (!strcmp(r.out, "not reused\n"))
		MT_TEST_SKIP("needs the loader to map a plugin where the one unloaded was (it did not, 5 tries)");
	ck_assert_str_eq(r.out, "reused\n");
	mt_test_run_release(&r);
	text = mt_test_read(trace, NULL);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_object *o = json_tokener_parse(line), *frames;
		const char *kind;

		mt_quiet_ptr_nonnull(o);
		kind = mt_test_json_str(o, "kind");
		if (!strcmp(kind, "frame")) {
			int64_t id = mt_test_json_i64(o, "frame_id");
			const char *sym = mt_test_json_opt_str(o, "symbol");

			if (id >= 0 && id < 512 && sym)
				symbols[id] = strdup(sym);
		} else if (!strcmp(kind, "stack")) {
			size_t n;

			frames = mt_test_json_member(o, "frames");
			n = json_object_array_length(frames);
			for (size_t k = 0; k + 1 < n; k++) {
				int64_t id = json_object_get_int64(json_object_array_get_idx(frames, k));
				int64_t up =
					json_object_get_int64(json_object_array_get_idx(frames, k + 1));

				if (id < 0 || id >= 512 || !symbols[id] ||
				    strcmp(symbols[id], "wl_dlreuse_mid"))
					continue;
				mids++;
				mt_quiet(up >= 0 && up < 512 && symbols[up] &&
						 !strcmp(symbols[up], "wl_dlreuse_alloc"),
					 "stack %s has %s above wl_dlreuse_mid",
					 json_object_to_json_string(frames),
					 up >= 0 && up < 512 && symbols[up] ? symbols[up] : "?");
			}
		}
		json_object_put(o);
	}
	/* The first plugin's stack and the second's (called from elsewhere
	 * in main). */
	mt_quiet(mids >= 2, "%d stacks through wl_dlreuse_mid", mids);
	for (int i = 0; i < 512; i++)
		free(symbols[i]);
	free(text);
	free(w);
	free(trace);
}
END_TEST

/*
 * The same program: the frames of the second plugin, loaded where the
 * first was after it was unloaded, name the second plugin (its module
 * and build id), never the first's records for the same addresses.  The
 * last 20 allocations through the plugins are the second's
 * (wl_dlreuse), the others the first's.
 */
#define DLREUSE_FRAMES 4096

typedef struct {
	char *symbol, *module, *build_id;
} dlreuse_frame_t;

/* Whether the plugin's three frames are at frames[at..at+3) of the
 * stack, leaf first, all in module plugin (its file name) and of one
 * build id, which goes to *build_id. */
static int dlreuse_plugin_at(const dlreuse_frame_t *f, json_object *frames, size_t at,
			     const char *plugin, const char **build_id)
{
	static const char *const names[] = { "wl_dlreuse_leaf", "wl_dlreuse_mid",
					     "wl_dlreuse_alloc" };

	for (size_t k = 0; k < 3; k++) {
		int64_t id = json_object_get_int64(json_object_array_get_idx(frames, at + k));
		const char *base;

		if (id <= 0 || id >= DLREUSE_FRAMES || !f[id].symbol || !f[id].module ||
		    !f[id].build_id || strcmp(f[id].symbol, names[k]))
			return 0;
		base = strrchr(f[id].module, '/');
		base = base ? base + 1 : f[id].module;
		ck_assert_msg(!strcmp(base, plugin), "frame %" PRId64 " (%s) names %s, not %s",
			      id, f[id].symbol, f[id].module, plugin);
		if (k == 0)
			*build_id = f[id].build_id;
		ck_assert_str_eq(f[id].build_id, *build_id);
	}
	return 1;
}

START_TEST(test_a_plugin_loaded_where_an_unloaded_one_was_names_its_own_frames)
{
	char preload[4096], output[4096];
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *w = mt_test_workload("wl_dlreuse"), *text, *line, *save = NULL, *status;
	char *argv[] = { w, NULL };
	char *env[] = { preload, output, "MEMTRACE_UNWIND=fast", NULL };
	dlreuse_frame_t *f = calloc(DLREUSE_FRAMES, sizeof(*f));
	json_object **stacks = calloc(DLREUSE_FRAMES, sizeof(*stacks));
	int64_t plugin_allocs[256];
	/* Volatile: MT_TEST_SKIP may jump over their first stores. */
	const char *volatile a_id = NULL, *volatile b_id = NULL;
	const char *id;
	int n = 0;
	mt_test_run_t r;

	ck_assert(f && stacks);
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s/libmtpreload.so", mt_test_build_dir());
	snprintf(output, sizeof(output), "MEMTRACE_OUTPUT=%s", trace);
	mt_test_run(&r, argv, env);
	mt_quiet(r.status == 0, "wl_dlreuse exited %d: %s", r.status, r.err);
	if (!strcmp(r.out, "not reused\n"))
		MT_TEST_SKIP("needs the loader to map a plugin where the one unloaded was (it did not, 5 tries)");
	ck_assert_str_eq(r.out, "reused\n");
	mt_test_run_release(&r);
	status = mt_test_check_status(trace);
	ck_assert_str_eq(status, "complete");
	free(status);
	text = mt_test_read(trace, NULL);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_object *o = json_tokener_parse(line);
		const char *kind;

		mt_quiet_ptr_nonnull(o);
		kind = mt_test_json_str(o, "kind");
		if (!strcmp(kind, "frame")) {
			int64_t fid = mt_test_json_i64(o, "frame_id");
			const char *sym = mt_test_json_opt_str(o, "symbol");
			const char *mod = mt_test_json_opt_str(o, "module");
			const char *bid = mt_test_json_opt_str(o, "build_id");

			ck_assert_int_lt(fid, DLREUSE_FRAMES);
			f[fid].symbol = sym ? strdup(sym) : NULL;
			f[fid].module = mod ? strdup(mod) : NULL;
			f[fid].build_id = bid ? strdup(bid) : NULL;
		} else if (!strcmp(kind, "stack")) {
			int64_t sid = mt_test_json_i64(o, "stack_id");

			ck_assert_int_lt(sid, DLREUSE_FRAMES);
			stacks[sid] = json_object_get(mt_test_json_member(o, "frames"));
		} else if (!strcmp(kind, "alloc") && json_object_object_get_ex(o, "stack", NULL)) {
			int64_t sid = mt_test_json_i64(o, "stack");
			json_object *fr;

			ck_assert(sid > 0 && sid < DLREUSE_FRAMES && stacks[sid]);
			fr = stacks[sid];
			for (size_t at = 0; at + 3 <= json_object_array_length(fr); at++) {
				int64_t fid = json_object_get_int64(json_object_array_get_idx(fr, at));

				if (fid > 0 && fid < DLREUSE_FRAMES && f[fid].symbol &&
				    !strcmp(f[fid].symbol, "wl_dlreuse_leaf")) {
					ck_assert_int_lt(n, 256);
					plugin_allocs[n++] = sid;
					break;
				}
			}
		}
		json_object_put(o);
	}
	/* Each run of the plugins allocates 20 times through them. */
	mt_quiet(n >= 40, "%d allocations through the plugins", n);
	for (int i = 0; i < n; i++) {
		json_object *fr = stacks[plugin_allocs[i]];
		int b = i >= n - 20, found = 0;

		for (size_t at = 0; at + 3 <= json_object_array_length(fr) && !found; at++)
			found = dlreuse_plugin_at(f, fr, at,
						  b ? "libwl_dlreuse_b.so" : "libwl_dlreuse_a.so",
						  &id);
		mt_quiet(found, "allocation %d's stack %s lacks the plugin's three frames", i,
			 json_object_to_json_string(fr));
		if (b && !b_id)
			b_id = id;
		else if (!b && !a_id)
			a_id = id;
		ck_assert_str_eq(id, b ? b_id : a_id);
	}
	ck_assert_str_ne(a_id, b_id);
	for (int i = 0; i < DLREUSE_FRAMES; i++) {
		free(f[i].symbol);
		free(f[i].module);
		free(f[i].build_id);
		json_object_put(stacks[i]);
	}
	free(f);
	free(stacks);
	free(text);
	free(w);
	free(trace);
}
END_TEST

/* ---- when libunwind is opened ---- */

/* Run wl_unwind_lib in mode (and arg) under the preload, with extra
 * (one "NAME=value"; NULL: MEMTRACE_UNWIND=fast): exit 0, no line that
 * tracing stops, and every trace in dir complete.
 * Returns the run, stdout and stderr, for the caller to release; status
 * 77 is returned as it is (seccomp cannot be installed here). */
static void run_workload(mt_test_run_t *r, const char *workload, const char *dir, char *mode,
			 char *arg, const char *extra)
{
	char preload[4096], output[4096], *env[6], *w = mt_test_workload(workload);
	char *argv[] = { w, mode, arg, NULL };
	int n = 0;

	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s/libmtpreload.so", mt_test_build_dir());
	snprintf(output, sizeof(output), "MEMTRACE_OUTPUT=%s/t.%%p.jsonl", dir);
	env[n++] = preload;
	env[n++] = output;
	env[n++] = "MEMTRACE_STATS=1";
	/* The default unwinder, also under make check UNWIND=verify. */
	env[n++] = extra ? (char *)extra : "MEMTRACE_UNWIND=fast";
	env[n] = NULL;
	mt_test_run(r, argv, env);
	free(w);
	if (r->status == 77)
		return;
	ck_assert_msg(r->status == 0, "%s %s exited %d: %s", workload, mode, r->status, r->err);
	ck_assert_msg(!strstr(r->err, "tracing stops"), "%s: %s", mode, r->err);
	ck_assert_uint_ge(mt_test_assert_traces_complete(dir), 1);
}

static void run_open(mt_test_run_t *r, const char *dir, char *mode, char *arg, const char *extra)
{
	run_workload(r, "wl_unwind_lib", dir, mode, arg, extra);
}

/* The MEMTRACE_STATS unwind line: the stacks the fast walker gave, those
 * it left to libunwind, and the rules it read from .eh_frame. */
static void unwind_counts(const char *err, uint64_t *fast, uint64_t *slow, uint64_t *rules)
{
	const char *line = strstr(err, "memtrace: unwind: fast ");

	ck_assert_msg(line && sscanf(line, "memtrace: unwind: fast %" SCNu64 " libunwind %" SCNu64
				     " rules %" SCNu64, fast, slow, rules) == 3,
		      "no unwind line: %s", err);
}

/* The stacks the MEMTRACE_STATS line says libunwind walked. */
static uint64_t libunwind_walks(const char *err)
{
	uint64_t fast = 0, slow = 0, rules = 0;

	unwind_counts(err, &fast, &slow, &rules);
	ck_assert_uint_gt(fast, 0);
	return slow;
}

/* The rules the MEMTRACE_STATS line says were read from .eh_frame. */
static uint64_t rules_read(const char *err)
{
	uint64_t fast = 0, slow = 0, rules = 0;

	unwind_counts(err, &fast, &slow, &rules);
	return rules;
}

/* Every stack of the allocations of size bytes in the one trace of dir,
 * one line each, its frames' symbols and module offsets innermost first. */
static char *stacks_of_size(const char *dir, long size)
{
	size_t n = 0, len = 0, cap = 1 << 16;
	char **names = mt_test_traces(dir, &n), *path, *text, *line, *save = NULL;
	char *out = calloc(1, cap);
	json_object *frames = json_object_new_object(), *stacks = json_object_new_object();

	ck_assert_uint_eq(n, 1);
	path = mt_test_path(dir, names[0]);
	text = mt_test_trace_text(path, NULL, 1);
	ck_assert_ptr_nonnull(text);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_object *o = json_tokener_parse(line);
		const char *kind = mt_test_json_str(o, "kind");
		char key[32];

		if (!strcmp(kind, "frame")) {
			char name[512];

			snprintf(name, sizeof(name), "%s@%s",
				 mt_test_json_opt_str(o, "symbol") ? mt_test_json_opt_str(o, "symbol") : "?",
				 mt_test_json_str(o, "module_offset"));
			snprintf(key, sizeof(key), "%" PRIu64, mt_test_json_u64(o, "frame_id"));
			json_object_object_add(frames, key, json_object_new_string(name));
		} else if (!strcmp(kind, "stack")) {
			snprintf(key, sizeof(key), "%" PRIu64, mt_test_json_u64(o, "stack_id"));
			json_object_object_add(stacks, key, json_object_get(mt_test_json_member(o, "frames")));
		} else if (!strcmp(kind, "alloc") && mt_test_json_i64(o, "size") == size) {
			json_object *ids;

			snprintf(key, sizeof(key), "%" PRIu64, mt_test_json_u64(o, "stack"));
			ids = mt_test_json_member(stacks, key);
			for (size_t i = 0; i < json_object_array_length(ids); i++) {
				json_object *name;

				snprintf(key, sizeof(key), "%" PRId64,
					 json_object_get_int64(json_object_array_get_idx(ids, i)));
				name = mt_test_json_member(frames, key);
				len += (size_t)snprintf(out + len, cap - len, "%s;",
							json_object_get_string(name));
				ck_assert_uint_lt(len, cap);
			}
			len += (size_t)snprintf(out + len, cap - len, "\n");
		}
		json_object_put(o);
	}
	json_object_put(frames);
	json_object_put(stacks);
	free(text);
	free(path);
	mt_test_traces_release(names, n);
	return out;
}

START_TEST(test_a_process_whose_stacks_the_fast_walker_takes_never_maps_libunwind)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	run_open(&r, dir, "plain", NULL, NULL);
	ck_assert_str_eq(r.out, "libunwind absent\n");
	ck_assert_uint_eq(libunwind_walks(r.err), 0);
	mt_test_run_release(&r);
}
END_TEST

/* Its first need comes inside a signal handler on an alternate stack;
 * the stacks are the ones libunwind gives when it is the only unwinder
 * (opened at the start), down through the signal frame to main. */
START_TEST(test_the_first_stack_only_libunwind_walks_opens_it_and_is_libunwinds)
{
	char *dir = mt_test_scratch(), *ref = mt_test_scratch(), *lazy, *whole;
	mt_test_run_t r;

	run_open(&r, dir, "signal", NULL, NULL);
	ck_assert_str_eq(r.out, "libunwind mapped\n");
	ck_assert_uint_eq(libunwind_walks(r.err), 20);
	mt_test_run_release(&r);
	run_open(&r, ref, "signal", NULL, "MEMTRACE_UNWIND=libunwind");
	mt_test_run_release(&r);
	lazy = stacks_of_size(dir, 333);
	whole = stacks_of_size(ref, 333);
	ck_assert_str_eq(lazy, whole);
	ck_assert_msg(strstr(lazy, "on_usr1@") && strstr(lazy, "main@"), "%s", lazy);
	free(lazy);
	free(whole);
}
END_TEST

/* Runs wl_unwind_lib threads (with count, that many threads of one
 * block each) and checks that libunwind walked walks stacks and that the
 * trace has no free of a block it never saw allocated. */
static void threads_free_only_their_own(char *count, uint64_t walks, int64_t threads)
{
	char *dir = mt_test_scratch(), *path;
	char **names;
	json_object *row;
	mt_test_run_t r;
	size_t n = 0;

	run_open(&r, dir, "threads", count, NULL);
	ck_assert_str_eq(r.out, "libunwind mapped\n");
	ck_assert_uint_eq(libunwind_walks(r.err), walks);
	mt_test_run_release(&r);
	names = mt_test_traces(dir, &n);
	ck_assert_uint_eq(n, 1);
	path = mt_test_path(dir, names[0]);
	mt_test_memtrace_in(&r, NULL, "summary", path, NULL);
	ck_assert_msg(r.status == 0, "summary: %d %s", r.status, r.err);
	row = json_tokener_parse(r.out);
	ck_assert_ptr_nonnull(row);
	ck_assert_int_eq(mt_test_json_i64(row, "unknown_frees"), 0);
	ck_assert_int_ge(mt_test_json_i64(row, "threads"), threads);
	json_object_put(row);
	mt_test_run_release(&r);
	free(path);
	mt_test_traces_release(names, n);
}

/* glibc gives each thread that calls into libunwind (opened with dlopen)
 * a block of its thread-local storage, with malloc, and frees it when
 * the thread is done, in whichever thread: the tracer's block, which the
 * trace must neither show allocated nor freed. */
START_TEST(test_libunwinds_blocks_for_each_thread_are_no_frees_of_the_programs)
{
	threads_free_only_their_own(NULL, 80, 5);
}
END_TEST

/* Those blocks come from the preload's static arena, which takes each
 * back when its thread is done: 5,000 threads one after another need
 * more than the whole arena (80,000 bytes in blocks of 16 against 64
 * KiB), and an arena that kept every block gave the last thousand or so
 * threads the real malloc's, whose frees the trace then showed (1,262
 * unknown frees). */
START_TEST(test_libunwinds_blocks_of_thousands_of_threads_are_no_frees_of_the_programs)
{
	threads_free_only_their_own("5000", 5000, 5001);
}
END_TEST

/* A fork from another thread while the tracer opens libunwind for the
 * main thread waits for it: a child that found the open claimed by a
 * thread it does not have waited for it, then ended its trace.  A race:
 * 20 runs of 40 forks (without the wait, about one run in 25 lost a
 * child's trace). */
START_TEST(test_a_fork_while_libunwind_opens_waits_for_it)
{
	for (int run = 0; run < 20; run++) {
		char *dir = mt_test_scratch();
		mt_test_run_t r;

		run_open(&r, dir, "forks", NULL, NULL);
		ck_assert_str_eq(r.out, "libunwind mapped\n");
		mt_test_run_release(&r);
	}
}
END_TEST

START_TEST(test_the_programs_dlopen_opens_libunwind_first)
{
	char *dir = mt_test_scratch(), *lib = mt_test_workload("libwl_strippable.so");
	mt_test_run_t r;

	run_open(&r, dir, "dlopen", lib, NULL);
	ck_assert_str_eq(r.out, "libunwind mapped\n");
	ck_assert_uint_eq(libunwind_walks(r.err), 0);
	mt_test_run_release(&r);
	free(lib);
}
END_TEST

/* The filter refuses the files and mappings a dlopen needs: libunwind
 * was opened before it went in, and walks the handler's stacks. */
START_TEST(test_a_program_that_locks_itself_down_has_libunwind_opened_before)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	run_open(&r, dir, "seccomp", NULL, NULL);
	if (r.status == 77) {
		mt_test_skip(__func__, "seccomp filters cannot be installed here (%s)", r.err);
	} else {
		ck_assert_str_eq(r.out, "locking down\nlibunwind mapped\n");
		ck_assert_uint_eq(libunwind_walks(r.err), 20);
	}
	mt_test_run_release(&r);
}
END_TEST

/* A libunwind.so.8 that is no ELF file, first on LD_LIBRARY_PATH: the
 * first stack that needs it ends the trace, complete, with one line, and
 * the program prints and exits as it would bare. */
START_TEST(test_a_libunwind_that_cannot_be_opened_ends_the_trace_and_the_program_runs_on)
{
	char *dir = mt_test_scratch(), *libs = mt_test_path(dir, "libs");
	char *bad = mt_test_path(libs, "libunwind.so.8"), *w = mt_test_workload("wl_unwind_lib");
	char *traces = mt_test_path(dir, "traces"), preload[4096], output[4096], path[4096];
	char *argv[] = { w, "signal", NULL };
	char *env[] = { preload, output, path, "MEMTRACE_UNWIND=fast", NULL };
	mt_test_run_t r;

	mt_quiet_int_eq(mkdir(libs, 0700), 0);
	mt_quiet_int_eq(mkdir(traces, 0700), 0);
	mt_test_write(bad, "", 0);
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s/libmtpreload.so", mt_test_build_dir());
	snprintf(output, sizeof(output), "MEMTRACE_OUTPUT=%s/t.%%p.jsonl", traces);
	snprintf(path, sizeof(path), "LD_LIBRARY_PATH=%s", libs);
	mt_test_run(&r, argv, env);
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "libunwind absent\n");
	ck_assert_str_eq(r.err, "memtrace: cannot open libunwind.so.8; tracing stops, "
				"the program runs on\n");
	ck_assert_int_eq(mt_test_assert_traces_complete(traces), 1);
	{
		char *stacks = stacks_of_size(traces, 333);

		ck_assert_str_eq(stacks, "");
		free(stacks);
	}
	mt_test_run_release(&r);
	free(w);
	free(bad);
	free(libs);
	free(traces);
}
END_TEST

/* What mt_unwind_lib_open() gives in a child whose loader says it is
 * adding an object (as inside a dlopen): with threads, until another
 * thread says the list is whole again after ms milliseconds (0: never).
 * Exits 0 when opened, 1 when refused, 2 when refused but not failed. */
static void *loader_done_later(void *arg)
{
	struct timespec ts = { 0, (long)(intptr_t)arg * 1000000L };

	nanosleep(&ts, NULL);
	__atomic_store_n(&mt_unwind_lib_loader_debug()->r_state, RT_CONSISTENT, __ATOMIC_RELEASE);
	return NULL;
}

static int open_while_loader_adds(int threads, int ms)
{
	pid_t pid = fork();
	int status;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		pthread_t t;
		int rc;

		(void)!freopen("/dev/null", "w", stderr);
		__atomic_store_n(&mt_unwind_lib_loader_debug()->r_state, RT_ADD, __ATOMIC_RELEASE);
		if (threads && pthread_create(&t, NULL, loader_done_later, (void *)(intptr_t)ms))
			_exit(3);
		rc = mt_unwind_lib_open();
		if (rc < 0)
			_exit(mt_unwind_lib_failed() ? 1 : 2);
		_exit(mt_unwind_lib_is_open() && mt_unwind_lib_backtrace ? 0 : 4);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* One thread: the loader at work is this thread's, below the caller. */
START_TEST(test_libunwind_is_never_opened_inside_the_loaders_own_work)
{
	ck_assert_int_eq(open_while_loader_adds(0, 0), 1);
}
END_TEST

START_TEST(test_libunwind_waits_for_another_threads_loader_to_finish)
{
	ck_assert_int_eq(open_while_loader_adds(1, 20), 0);
}
END_TEST

/* A thread that starts after another ended takes over its unwind rules
 * and stack cache (preload/mt_spares.h): 200 threads one after another
 * read the rules one thread reads, and their stacks are its stacks. */
START_TEST(test_threads_started_one_after_another_read_the_rules_once)
{
	char *one = mt_test_scratch(), *many = mt_test_scratch(), *first, *all, *line, *save = NULL;
	uint64_t rules_one;
	mt_test_run_t r;
	int lines = 0;

	run_workload(&r, "wl_thread_churn", one, "1", NULL, NULL);
	rules_one = rules_read(r.err);
	mt_test_run_release(&r);
	run_workload(&r, "wl_thread_churn", many, "200", NULL, NULL);
	ck_assert_str_eq(r.out, "ok\n");
	ck_assert_uint_eq(rules_read(r.err), rules_one);
	mt_test_run_release(&r);
	first = stacks_of_size(one, 500);
	all = stacks_of_size(many, 500);
	ck_assert_msg(strstr(first, "work@") && strstr(first, "nest@"), "%s", first);
	for (line = strtok_r(all, "\n", &save); line; line = strtok_r(NULL, "\n", &save), lines++)
		ck_assert_msg(!strncmp(line, first, strlen(line)) && first[strlen(line)] == '\n',
			      "%s\nagainst\n%s", line, first);
	ck_assert_int_eq(lines, 200);
	free(first);
	free(all);
}
END_TEST

/* A forked child finds the parent's kept stack caches empty (they are
 * wiped at a fork, as its new trace's stacks are new) and its rules
 * whole: both traces complete, every stack declared in its own trace. */
START_TEST(test_a_forked_child_takes_over_the_threads_its_parent_kept)
{
	char *dir = mt_test_scratch();
	mt_test_run_t r;

	run_workload(&r, "wl_thread_churn", dir, "20", "fork", NULL);
	ck_assert_str_eq(r.out, "ok\n");
	mt_test_run_release(&r);
	ck_assert_uint_eq(mt_test_assert_traces_complete(dir), 2);
}
END_TEST

/* The MEMTRACE_STATS unwind lines of err, in order: rules read, rules
 * taken from the fork's shared table and rules added to it, each
 * process's (at most max). */
static int shared_counts(const char *err, uint64_t (*out)[3], int max)
{
	const char *at = err;
	int n = 0;

	while (n < max && (at = strstr(at, "memtrace: unwind: fast "))) {
		uint64_t fast, slow;

		ck_assert_msg(sscanf(at, "memtrace: unwind: fast %" SCNu64 " libunwind %" SCNu64
				     " rules %" SCNu64 " shared %" SCNu64 " kept %" SCNu64,
				     &fast, &slow, &out[n][0], &out[n][1], &out[n][2]) == 5,
			      "no shared counts: %s", at);
		n++;
		at++;
	}
	return n;
}

/* Children forked one after another that allocate from code their
 * parent never allocated from: the first reads its rules from .eh_frame
 * and keeps them in the table the fork's processes share
 * (preload/mt_unwind_share.h); the others read none of them, taking
 * them from the table, and their stacks are libunwind's (verify). */
START_TEST(test_forked_children_read_the_rules_a_sibling_read)
{
	char *dir = mt_test_scratch();
	uint64_t c[6][3];
	mt_test_run_t r;

	run_workload(&r, "wl_forkrules", dir, "4", NULL, "MEMTRACE_UNWIND=verify");
	ck_assert_str_eq(r.out, "ok\n");
	/* Four children, then the parent. */
	ck_assert_int_eq(shared_counts(r.err, c, 6), 5);
	ck_assert_uint_gt(c[0][2], 0);
	for (int i = 1; i < 4; i++) {
		ck_assert_msg(c[i][0] < c[0][0] && c[i][1] > 0 && c[i][2] == 0,
			      "child %d: rules %" PRIu64 " shared %" PRIu64 " kept %" PRIu64
			      " (the first: rules %" PRIu64 ")",
			      i + 1, c[i][0], c[i][1], c[i][2], c[0][0]);
		ck_assert_uint_eq(c[i][0], c[1][0]);
	}
	ck_assert_uint_eq(mt_test_assert_traces_complete(dir), 5);
	mt_test_run_release(&r);
}
END_TEST

/* Siblings that each load a plugin after the fork, other code at one
 * address (wl_dlreuse's plugins: other rules at one offset), share no
 * rule for it: only code loaded before the table was made is shared.
 * Under MEMTRACE_UNWIND=verify, a rule of one plugin's taken for the
 * other's makes the stacks differ. */
START_TEST(test_siblings_that_load_other_code_at_one_address_share_no_rule_for_it)
{
	char preload[4096], output[4096];
	char *dir = mt_test_scratch(), *w = mt_test_workload("wl_forkrules");
	char *a = mt_test_workload("libwl_dlreuse_a.so"), *b = mt_test_workload("libwl_dlreuse_b.so");
	char *argv[] = { w, "4", a, b, NULL };
	char *env[] = { preload, output, "MEMTRACE_UNWIND=verify", "MEMTRACE_STATS=1", NULL };
	char at[2][4][32], *line, *save = NULL;
	int n[2] = { 0, 0 }, same = 0;
	mt_test_run_t r;

	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s/libmtpreload.so", mt_test_build_dir());
	snprintf(output, sizeof(output), "MEMTRACE_OUTPUT=%s/t.%%p.jsonl", dir);
	mt_test_run(&r, argv, env);
	mt_quiet(r.status == 0, "wl_forkrules exited %d: %s", r.status, r.err);
	mt_quiet(!strstr(r.err, "differ"), "%s", r.err);
	ck_assert_uint_eq(mt_test_assert_traces_complete(dir), 5);
	for (line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int i;
		char which;
		char addr[32];

		if (sscanf(line, "child %d %c %31s", &i, &which, addr) == 3 && n[which == 'b'] < 4)
			strcpy(at[which == 'b'][n[which == 'b']++], addr);
	}
	ck_assert_int_eq(n[0] + n[1], 4);
	for (int i = 0; i < n[0]; i++)
		for (int j = 0; j < n[1]; j++)
			same += !strcmp(at[0][i], at[1][j]);
	mt_test_run_release(&r);
	free(w);
	free(a);
	free(b);
	if (!same)
		MT_TEST_SKIP("needs the loader to map two siblings' plugins at one address "
			     "(it did not)");
}
END_TEST

/* The RssAnon wl_thread_churn N together reports, in KiB. */
static long rss_of_threads_together(mt_test_run_t *r)
{
	const char *at = strstr(r->out, "rss_anon_kib ");
	long kib = -1;

	ck_assert_msg(at && sscanf(at, "rss_anon_kib %ld", &kib) == 1, "%s", r->out);
	return kib;
}

/* A thread that meets a few stacks keeps a small rule table and stack
 * cache (one page of rules, 16 stacks) until it has read 64 rules or met
 * 64 stacks: 500 threads alive at once, 10 allocations each, take less
 * than 64 KiB each over their bare size (193 KiB each when every busy
 * thread's whole table and cache were made resident). */
START_TEST(test_threads_that_meet_a_few_stacks_stay_small)
{
	char *dir = mt_test_scratch(), *w = mt_test_workload("wl_thread_churn");
	char *argv[] = { w, "500", "together", NULL }, *env[] = { NULL };
	long bare, traced;
	mt_test_run_t r;

	mt_test_run(&r, argv, env);
	ck_assert_msg(r.status == 0, "bare: %d %s", r.status, r.err);
	bare = rss_of_threads_together(&r);
	mt_test_run_release(&r);
	run_workload(&r, "wl_thread_churn", dir, "500", "together", NULL);
	traced = rss_of_threads_together(&r);
	mt_test_run_release(&r);
	ck_assert_msg(traced - bare < 500 * 64, "bare %ld KiB, traced %ld KiB", bare, traced);
	free(w);
}
END_TEST

/* A hook's walk begins in the program's frame, which the hook's frame
 * pointer gives: it reads the rule of no address of the tracer's own.  A
 * program of one thread whose stacks are shorter than the stack depth
 * then reads a rule for each frame its trace declares and no more (each
 * walked frame is kept), where walks that began in the tracer read two
 * more, the hook's and the walker's.  make sanitize builds at -O1, where
 * the exported malloc calls the hook without a tail call: its frame, one
 * more, is walked and dropped. */
START_TEST(test_a_hooks_walk_reads_no_rule_of_the_tracers_own_code)
{
	char *dir = mt_test_scratch(), **names, *path;
	uint64_t rules;
	unsigned frames, exported = MT_TEST_SANITIZED ? 1 : 0;
	mt_test_run_t r;
	size_t n = 0;

	run_workload(&r, "wl_unwind", dir, "longjmp", NULL, NULL);
	ck_assert_msg(r.status == 0, "%d %s", r.status, r.err);
	rules = rules_read(r.err);
	mt_test_run_release(&r);
	names = mt_test_traces(dir, &n);
	ck_assert_uint_eq(n, 1);
	path = mt_test_path(dir, names[0]);
	frames = (unsigned)mt_test_trace_count(path, "frame", 0);
	ck_assert_uint_gt(rules, 0);
	ck_assert_msg(rules <= frames + exported, "%llu rules read for %u frames",
		      (unsigned long long)rules, frames);
	free(path);
	mt_test_traces_release(names, n);
}
END_TEST

Suite *mt_suite_unwind(void)
{
	Suite *s = suite_create("unwind");
	TCase *tc = tcase_create("verify");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_longjmp_out_of_allocating_frames_unwinds_as_libunwind_does);
	tcase_add_test(tc, test_swapcontext_coroutines_unwind_as_libunwind_does);
	tcase_add_test(tc, test_a_signal_handler_on_sigaltstack_unwinds_as_libunwind_does);
	tcase_add_test(tc, test_eight_threads_unwind_as_libunwind_does);
	tcase_add_test(tc, test_forked_children_unwind_as_libunwind_does);
	tcase_add_test(tc, test_a_recursion_deeper_than_a_stack_unwinds_as_libunwind_does);
	tcase_add_test(
		tc,
		test_a_frame_rebuilt_where_the_last_was_under_another_caller_unwinds_as_libunwind_does);
	tcase_add_test(tc,
		       test_cxx_throw_and_catch_through_allocating_frames_unwinds_as_libunwind_does);
	tcase_add_test(tc, test_a_plugin_loaded_where_an_unloaded_one_was_unwinds_by_its_own_rules);
	tcase_add_test(tc, test_a_plugin_loaded_where_an_unloaded_one_was_names_its_own_frames);
	tcase_add_test(tc, test_python3_unwinds_as_libunwind_does);
	tcase_add_test(tc, test_sqlite3_unwinds_as_libunwind_does);
	tcase_add_test(tc, test_gcc_compiling_a_file_unwinds_as_libunwind_does);
	suite_add_tcase(s, tc);
	tc = tcase_create("open");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_a_process_whose_stacks_the_fast_walker_takes_never_maps_libunwind);
	tcase_add_test(tc, test_the_first_stack_only_libunwind_walks_opens_it_and_is_libunwinds);
	tcase_add_test(tc, test_libunwinds_blocks_for_each_thread_are_no_frees_of_the_programs);
	tcase_add_test(tc, test_libunwinds_blocks_of_thousands_of_threads_are_no_frees_of_the_programs);
	tcase_add_test(tc, test_a_fork_while_libunwind_opens_waits_for_it);
	tcase_add_test(tc, test_the_programs_dlopen_opens_libunwind_first);
	tcase_add_test(tc, test_a_program_that_locks_itself_down_has_libunwind_opened_before);
	tcase_add_test(tc,
		       test_a_libunwind_that_cannot_be_opened_ends_the_trace_and_the_program_runs_on);
	tcase_add_test(tc, test_libunwind_is_never_opened_inside_the_loaders_own_work);
	tcase_add_test(tc, test_libunwind_waits_for_another_threads_loader_to_finish);
	suite_add_tcase(s, tc);
	tc = tcase_create("threads");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_threads_started_one_after_another_read_the_rules_once);
	tcase_add_test(tc, test_a_forked_child_takes_over_the_threads_its_parent_kept);
	tcase_add_test(tc, test_forked_children_read_the_rules_a_sibling_read);
	tcase_add_test(tc, test_siblings_that_load_other_code_at_one_address_share_no_rule_for_it);
	tcase_add_test(tc, test_threads_that_meet_a_few_stacks_stay_small);
	tcase_add_test(tc, test_a_hooks_walk_reads_no_rule_of_the_tracers_own_code);
	suite_add_tcase(s, tc);
	return s;
}
