/*
 * fuzz_trace: the libFuzzer target of `make fuzz` (clang,
 * -fsanitize=fuzzer,address,undefined).  Every input is a trace file as
 * an attacker would write it, and goes through everything the analyzer
 * does with one:
 *
 *   1. the whole pass (reader, parser, integrity, heap), then the
 *      summary, site and verdict lines, with and without
 *      --include-zero-live, and the capture and repetition rows;
 *   2. the same pass with one allocation made to fail (the input picks
 *      which), which must end in MT_ENOMEM or MT_OK and leak nothing;
 *   3. each line alone through the fast path and through json-c, which
 *      must agree whenever the fast path does not decline.
 *
 * Besides the sanitizers' findings it aborts when an invariant breaks:
 * live bytes that are not allocated minus freed, a peak below the live
 * value, a leak, an output line that is not one JSON object or is longer
 * than 8 KiB.  A crash it finds becomes a file of fixtures/fuzz/ and runs
 * in check_hostile ever after (see docs/security.md).
 */
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../analyzer/model/mt_analysis.h"
#include "../../analyzer/base/mt_buf.h"
#include "../../analyzer/base/mt_error.h"
#include "../../analyzer/parse/mt_flat.h"
#include "../../analyzer/parse/mt_any_json.h"
#include "../../analyzer/base/mt_mem.h"
#include "../../analyzer/parse/mt_parse.h"
#include "../../analyzer/read/mt_reader.h"
#include "../../analyzer/rows/mt_rows.h"
#include "../../analyzer/rows/mt_summary.h"

static int trace_fd = -1;
static char trace_path[64];
static mt_parser_t fast, json;
static struct json_tokener *checker;

#define FAIL(...)                                                          \
	do {                                                               \
		fprintf(stderr, "fuzz_trace: " __VA_ARGS__);               \
		fputc('\n', stderr);                                       \
		abort();                                                   \
	} while (0)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* The input becomes a file the analyzer opens by name, as it opens
	 * a real trace; memfd keeps it off the disk. */
	trace_fd = memfd_create("fuzz-trace", MFD_CLOEXEC);
	if (trace_fd < 0)
		FAIL("memfd_create failed");
	snprintf(trace_path, sizeof(trace_path), "/proc/self/fd/%d", trace_fd);
	if (mt_parser_init(&fast) || mt_parser_init(&json))
		FAIL("mt_parser_init failed");
	checker = json_tokener_new();
	if (!checker)
		FAIL("json_tokener_new failed");
	json_tokener_set_flags(checker,
			       JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	return 0;
}

static void set_input(const uint8_t *data, size_t size)
{
	size_t done = 0;

	if (ftruncate(trace_fd, 0) < 0)
		FAIL("ftruncate failed");
	while (done < size) {
		ssize_t n = pwrite(trace_fd, data + done, size - done,
				   (off_t)done);

		if (n <= 0)
			FAIL("pwrite failed");
		done += (size_t)n;
	}
}

/* Every line of out: ends in '\n', fits in 8 KiB with it, and is one
 * JSON object, as strict json-c reads it. */
static void check_lines(const mt_buf_t *out, const char *what)
{
	size_t at = 0;

	if (out->len && out->data[out->len - 1] != '\n')
		FAIL("%s does not end in a newline", what);
	while (at < out->len) {
		const char *line = out->data + at;
		const char *nl = memchr(line, '\n', out->len - at);
		size_t len = (size_t)(nl - line);
		struct json_object *o;

		if (len + 1 > MT_SUMMARY_LINE_MAX)
			FAIL("%s has a line of %zu bytes", what, len + 1);
		json_tokener_reset(checker);
		o = json_tokener_parse_ex(checker, line, (int)len);
		if (!o || !json_object_is_type(o, json_type_object) ||
		    json_tokener_get_parse_end(checker) != len)
			FAIL("%s wrote a line that is not a JSON object: %.*s",
			     what, (int)(len > 300 ? 300 : len), line);
		json_object_put(o);
		at += len + 1;
	}
}

static void check_site(const mt_site_t *s, const char *what)
{
	/* A site's bytes freed are its bytes allocated less its live ones:
	 * never more than it allocated. */
	if (s->live_bytes > s->bytes_allocated)
		FAIL("%s: more bytes live than allocated", what);
	if (s->peak_live_bytes < s->live_bytes)
		FAIL("%s: peak below live bytes", what);
}

static void check_heap(const mt_heap_t *h)
{
	size_t pos = 0;
	uint64_t key, live = 0, blocks, allocated;
	void *v;

	if (h->live_bytes != h->bytes_allocated - h->bytes_freed ||
	    h->bytes_freed > h->bytes_allocated)
		FAIL("heap: live bytes are not allocated minus freed");
	if (h->peak_live_bytes < h->live_bytes ||
	    h->peak_live_allocations < h->live_allocations)
		FAIL("heap: a peak below its live value");
	while (mt_map_iter(&h->allocators, &pos, &key, &v)) {
		const mt_allocator_t *a = *(mt_allocator_t *const *)v;

		if (a->peak_live_bytes < a->live_bytes)
			FAIL("allocator %llu: peak below live bytes",
			     (unsigned long long)key);
		live += a->live_bytes;
	}
	if (live != h->live_bytes)
		FAIL("heap: the allocators' live bytes do not add up");
	/* Every block is born in one site and dies in the one it was born
	 * in: the sites' live bytes, live blocks and bytes allocated add up
	 * to the heap's. */
	check_site(&h->no_stack, "site 0");
	live = h->no_stack.live_bytes;
	blocks = h->no_stack.live_allocations;
	allocated = h->no_stack.bytes_allocated;
	pos = 0;
	while (mt_map_iter(&h->stacks, &pos, &key, &v)) {
		const mt_site_t *s =
			mt_heap_stack_site(h, *(mt_stack_t *const *)v);

		check_site(s, "a site");
		live += s->live_bytes;
		blocks += s->live_allocations;
		allocated += s->bytes_allocated;
	}
	if (live != h->live_bytes)
		FAIL("heap: the sites' live bytes do not add up");
	if (blocks != h->live_allocations)
		FAIL("heap: the sites' live blocks do not add up");
	if (allocated != h->bytes_allocated)
		FAIL("heap: the sites' bytes allocated do not add up");
}

/* The whole pass and every rendering: the capture's judgement (one pass
 * and the --top 0 --include-zero-live line), then the verdict, summary and
 * site lines and both rows from the same analysis.  Returns how it ended. */
static int run_all(int verify)
{
	mt_row_judgement_t j;
	mt_buf_t out = MT_BUF_INIT;
	int rc = mt_rows_judge(&j, trace_path);
	const mt_analysis_t *a = &j.analysis;

	if (rc == MT_OK && j.outcome == MT_ROW_CAPTURE_MISSING)
		FAIL("the trace could not be read");
	if (rc == MT_OK && verify && !j.read_errno) {
		check_heap(&a->heap);
		if (j.outcome == MT_ROW_SUMMARY_WRITTEN)
			check_lines(&j.summary, "the capture's summary");
	}
	if (rc == MT_OK && (rc = mt_summary_render_check(a, &out)) == MT_OK &&
	    verify)
		check_lines(&out, "check");
	for (int zero = 0; rc == MT_OK && zero < 2 && !a->integrity.invalid;
	     zero++) {
		mt_buf_reset(&out);
		rc = mt_summary_render(a, 10, zero, &out);
		if (rc == MT_OK && verify)
			check_lines(&out, "summary");
		else if (rc != MT_OK && out.len)
			FAIL("summary failed but wrote %zu bytes", out.len);
		if (rc == MT_ETOOLONG)
			rc = MT_OK;
	}
	if (rc == MT_OK) {
		mt_buf_reset(&out);
		if ((rc = mt_rows_capture(&out, &j, trace_path,
					  "summary.jsonl")) == MT_OK &&
		    (rc = mt_rows_repetition(&out, &j, 2, 0)) == MT_OK && verify)
			check_lines(&out, "rows");
	}
	mt_buf_release(&out);
	mt_rows_judgement_release(&j);
	return rc;
}

static void diff_line(const char *line, size_t len)
{
	mt_event_t ef, ej;
	mt_parse_result_t rf = mt_flat_parse(&fast, line, len, &ef);
	mt_parse_result_t rj = mt_any_json_parse(&json, line, len, &ej);

	if (rj == MT_PARSE_DECLINED)
		FAIL("json-c declined a line");
	if (rf == MT_PARSE_DECLINED || rf == MT_PARSE_NOMEM ||
	    rj == MT_PARSE_NOMEM)
		return;
	if (rf != rj)
		FAIL("fast path says %d, json-c %d on: %.*s", rf, rj,
		     (int)(len > 300 ? 300 : len), line);
	if (rf == MT_PARSE_BAD_VERSION && fast.version != json.version)
		FAIL("the paths read different versions");
	if (rf != MT_PARSE_OK)
		return;
#define SAME(f)                                                            \
	if (ef.f != ej.f)                                                  \
		FAIL("the paths' events differ in " #f " on: %.*s",        \
		     (int)(len > 300 ? 300 : len), line)
	SAME(seq); SAME(kind); SAME(has); SAME(fn); SAME(allocator_id);
	SAME(ptr); SAME(new_ptr); SAME(size); SAME(align); SAME(stack);
	SAME(tid); SAME(t); SAME(frame_id); SAME(ip); SAME(offset);
	SAME(module_offset); SAME(stack_id); SAME(dropped); SAME(nframes);
	SAME(symbol_len); SAME(module_len); SAME(name_len); SAME(reason_len);
#undef SAME
	if ((ef.symbol_len && memcmp(ef.symbol, ej.symbol, ef.symbol_len)) ||
	    (ef.module_len && memcmp(ef.module, ej.module, ef.module_len)) ||
	    (ef.name_len && memcmp(ef.name, ej.name, ef.name_len)) ||
	    (ef.reason_len && memcmp(ef.reason, ej.reason, ef.reason_len)) ||
	    (ef.nframes && memcmp(ef.frames, ej.frames,
				  ef.nframes * sizeof(*ef.frames))))
		FAIL("the paths' events differ in a string or the frames");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int64_t before = mt_mem_outstanding();
	uint64_t calls, h = 1469598103934665603ull;

	set_input(data, size);
	mt_mem_fail_at(0, 0);
	if (run_all(1) != MT_OK)
		FAIL("the analysis ran out of memory with no failure injected");
	calls = mt_mem_calls();
	if (mt_mem_outstanding() != before)
		FAIL("%lld blocks leaked",
		     (long long)(mt_mem_outstanding() - before));

	/* One allocation failure, at a place the input chooses. */
	for (size_t i = 0; i < size; i++)
		h = (h ^ data[i]) * 1099511628211ull;
	if (calls) {
		mt_mem_fail_at(1 + h % calls, 0);
		run_all(0);
		mt_mem_fail_at(0, 0);
		if (mt_mem_outstanding() != before)
			FAIL("%lld blocks leaked after an allocation failure",
			     (long long)(mt_mem_outstanding() - before));
	}

	for (size_t at = 0; at < size;) {
		const char *line = (const char *)data + at;
		const char *nl = memchr(line, '\n', size - at);
		size_t len = nl ? (size_t)(nl - line) : size - at;

		if (len <= MT_READER_LINE_MAX)
			diff_line(line, len);
		at += len + 1;
	}
	return 0;
}
