/*
 * mt_pprof: the pprof export, profile.proto through mt_protobuf and gzip
 * through zlib.  It must never name a frame otherwise than the flame
 * graph does, give a total that disagrees with the summary's, nor leave
 * half a profile in its output.
 */
#include "../export/mt_pprof.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../base/mt_error.h"
#include "../export/mt_flame.h"
#include "../base/mt_map.h"
#include "../base/mt_mem.h"
#include "../export/mt_protobuf.h"
#include "../model/mt_sites.h"
#include "../model/mt_srcline.h"

#define ADD(expr)                     \
	do {                          \
		if ((rc = (expr)))    \
			goto cleanup; \
	} while (0)

/* profile.proto's field numbers. */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	VALUE_TYPE_TYPE = 1,
	VALUE_TYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9,
	MAPPING_HAS_INLINE_FRAMES = 10,
	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1,
	LINE_LINE = 2,
	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
};

/* The strings every profile starts its table with, in this order, so
 * their indices are the same in every profile. */
enum {
	S_ALLOC_OBJECTS = 1,
	S_COUNT,
	S_ALLOC_SPACE,
	S_BYTES,
	S_INUSE_OBJECTS,
	S_INUSE_SPACE,
	S_SPACE,
	S_FIXED, /* how many */
};
static const char *const fixed_strings[S_FIXED] = {
	"", "alloc_objects", "count", "alloc_space", "bytes",
	"inuse_objects", "inuse_space", "space",
};

#define NVALUES 4

/* A module at one load address. */
typedef struct {
	const char *path; /* the trace's, alive with the heap */
	uint64_t start, limit;
	int64_t filename, build_id;
	int has_lines, has_inlines;
	uint64_t roots; /* allocations of whole stacks that start here */
} mapping_t;

/* Where a key's text is in keys, by the hash of its text. */
typedef struct {
	uint64_t id;
	size_t off, len;
} keyed_t;

typedef struct {
	const mt_heap_t *h;
	mt_srcline_t lines;
	mt_protobuf_strtab_t strs;
	mt_map_t loc_of;  /* frame id -> uint64_t, its location id */
	mt_map_t fn_of;   /* hash of "name\0file", probed -> keyed_t */
	mt_buf_t fn_keys; /* the functions' "name\0file" texts */
	mt_map_t map_of;  /* hash of path and start, probed -> keyed_t (index) */
	mapping_t *maps;
	size_t nmaps, maps_cap;
	mt_buf_t locs, funcs; /* Location and Function fields, encoded */
	mt_buf_t msg, line, name, key; /* scratch */
	uint64_t nlocs, nfuncs;
	uint64_t no_stack, truncated; /* the pseudo-locations' ids, or 0 */
} pprof_t;

static uint64_t hash_bytes(uint64_t h, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull; /* FNV-1a */
	return h;
}

#define HASH_SEED 0xcbf29ce484222325ull

static void pprof_init(pprof_t *t, const mt_heap_t *h)
{
	memset(t, 0, sizeof(*t));
	t->h = h;
	mt_srcline_init(&t->lines);
	mt_map_init(&t->loc_of, sizeof(uint64_t));
	mt_map_init(&t->fn_of, sizeof(keyed_t));
	mt_map_init(&t->map_of, sizeof(keyed_t));
}

static void pprof_release(pprof_t *t)
{
	mt_buf_t *bufs[] = { &t->fn_keys, &t->locs, &t->funcs, &t->msg,
			     &t->line, &t->name, &t->key };

	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		mt_buf_release(bufs[i]);
	mt_map_release(&t->loc_of);
	mt_map_release(&t->fn_of);
	mt_map_release(&t->map_of);
	mt_mem_free(t->maps);
	mt_protobuf_strtab_release(&t->strs);
	mt_srcline_release(&t->lines);
}

static int intern(pprof_t *t, const char *s, int64_t *out)
{
	return mt_protobuf_strtab_index(&t->strs, s, strlen(s), out);
}

/* The id of the function named name[0..len) in file (NULL: unknown),
 * written to funcs the first time. */
static int function_id(pprof_t *t, const char *name, size_t len,
		       const char *file, uint64_t *out)
{
	mt_buf_t *k = &t->key, *m = &t->msg;
	int64_t name_index, file_index = 0;
	keyed_t *found;
	uint64_t hash;
	void *v;
	int rc;

	mt_buf_reset(k);
	ADD(mt_buf_add(k, name, len));
	ADD(mt_buf_add(k, "", 1));
	if (file)
		ADD(mt_buf_add_str(k, file));
	for (hash = hash_bytes(HASH_SEED, k->data, k->len);
	     (found = mt_map_find(&t->fn_of, hash)); hash++)
		if (found->len == k->len &&
		    !memcmp(t->fn_keys.data + found->off, k->data, k->len)) {
			*out = found->id;
			return MT_OK;
		}
	ADD(mt_protobuf_strtab_index(&t->strs, name, len, &name_index));
	if (file)
		ADD(intern(t, file, &file_index));
	ADD(mt_map_upsert(&t->fn_of, hash, &v, NULL));
	*(keyed_t *)v = (keyed_t){ t->nfuncs + 1, t->fn_keys.len, k->len };
	ADD(mt_buf_add(&t->fn_keys, k->data, k->len));
	*out = ++t->nfuncs;
	mt_buf_reset(m);
	ADD(mt_protobuf_add_uint(m, FUNCTION_ID, *out));
	ADD(mt_protobuf_add_int(m, FUNCTION_NAME, name_index));
	/* The name as the flame graph shows it is the only one kept: the
	 * symbol table's may have been replaced by libdw's. */
	ADD(mt_protobuf_add_int(m, FUNCTION_SYSTEM_NAME, name_index));
	ADD(mt_protobuf_add_int(m, FUNCTION_FILENAME, file_index));
	rc = mt_protobuf_add_bytes(&t->funcs, PROFILE_FUNCTION, m->data, m->len);
cleanup:
	return rc;
}

/* The id of frame f's mapping, its module at the load address the frame
 * implies, or 0 when the frame names no module. */
static int mapping_id(pprof_t *t, const mt_frame_t *f, int has_line,
		      int has_inlines, uint64_t *out)
{
	uint64_t start, hash;
	keyed_t *found;
	mapping_t *mp;
	size_t len;
	void *v;
	int rc;

	*out = 0;
	if (!f || !(f->has & MT_HAS_MODULE) || !(f->has & MT_HAS_MODULE_OFFSET) ||
	    !f->module[0] || f->module_offset > f->ip)
		return MT_OK;
	start = f->ip - f->module_offset;
	len = strlen(f->module);
	for (hash = hash_bytes(HASH_SEED ^ start, f->module, len);
	     (found = mt_map_find(&t->map_of, hash)); hash++) {
		mp = &t->maps[found->id];
		if (mp->start == start && !strcmp(mp->path, f->module))
			goto found;
	}
	if (t->nmaps == t->maps_cap) {
		size_t cap = t->maps_cap ? 2 * t->maps_cap : 16;
		mapping_t *grown = mt_mem_realloc(t->maps, cap * sizeof(*grown));

		if (!grown)
			return MT_ENOMEM;
		t->maps = grown;
		t->maps_cap = cap;
	}
	mp = &t->maps[t->nmaps];
	*mp = (mapping_t){ f->module, start, start, 0, 0, 0, 0, 0 };
	if ((rc = intern(t, f->module, &mp->filename)) ||
	    (f->build_id && (rc = intern(t, f->build_id, &mp->build_id))) ||
	    (rc = mt_map_upsert(&t->map_of, hash, &v, NULL)))
		return rc;
	*(keyed_t *)v = (keyed_t){ t->nmaps++, 0, 0 };
found:
	if (f->ip >= mp->limit)
		mp->limit = f->ip + 1;
	mp->has_lines |= has_line;
	mp->has_inlines |= has_inlines;
	*out = (uint64_t)(mp - t->maps) + 1;
	return MT_OK;
}

/* A Location's Line: a function, and a line number (0: unknown). */
typedef struct {
	uint64_t fn, line;
} line_t;

/* Write a Location: id, mapping, address, its n lines, the innermost
 * (inlined) function first. */
static int add_location(pprof_t *t, uint64_t id, uint64_t mapping,
			uint64_t address, const line_t *lines, size_t n)
{
	mt_buf_t *m = &t->msg, *l = &t->line;
	int rc;

	mt_buf_reset(m);
	ADD(mt_protobuf_add_uint(m, LOCATION_ID, id));
	ADD(mt_protobuf_add_uint(m, LOCATION_MAPPING_ID, mapping));
	ADD(mt_protobuf_add_uint(m, LOCATION_ADDRESS, address));
	for (size_t i = 0; i < n; i++) {
		mt_buf_reset(l);
		ADD(mt_protobuf_add_uint(l, LINE_FUNCTION_ID, lines[i].fn));
		ADD(mt_protobuf_add_int(l, LINE_LINE, (int64_t)lines[i].line));
		ADD(mt_protobuf_add_bytes(m, LOCATION_LINE, l->data ? l->data : "",
					  l->len));
	}
	rc = mt_protobuf_add_bytes(&t->locs, PROFILE_LOCATION, m->data, m->len);
cleanup:
	return rc;
}

/*
 * A location's lines, innermost first, as pprof defines them: one per
 * level of the frame (mt_srcline_level_t), each with its own function,
 * named as the flame graph names it, and its own line (the call into
 * the next level in for all but the innermost).  lines has room for
 * loc's levels.
 */
static int location_lines(pprof_t *t, uint64_t id, const mt_frame_t *f,
			  const mt_srcline_loc_t *loc, line_t *lines, size_t *n)
{
	size_t k = 0, levels = mt_srcline_nlevels(loc);
	int rc = MT_OK;

	for (size_t i = 0; i < levels; i++) {
		mt_srcline_level_t l = mt_srcline_level(loc, i);

		mt_buf_reset(&t->name);
		if (f)
			ADD(mt_flame_add_level(&t->name, &t->lines, id, f, i));
		else
			ADD(mt_buf_add_str(&t->name, "?"));
		ADD(function_id(t, t->name.data ? t->name.data : "",
				t->name.len, l.file, &lines[k].fn));
		lines[k++].line = l.file ? l.line : 0;
	}
	*n = k;
cleanup:
	return rc;
}

/* The id of frame id's location, written the first time. */
static int location_id(pprof_t *t, uint64_t id, uint64_t *out)
{
	const mt_frame_t *f = mt_map_find(&t->h->frames, id);
	uint64_t *found = mt_map_find(&t->loc_of, id), mapping;
	mt_srcline_loc_t loc = { 0 };
	line_t *lines = NULL;
	size_t n = 0;
	void *v;
	int rc;

	if (found) {
		*out = *found;
		return MT_OK;
	}
	if (f)
		ADD(mt_srcline_resolve(&t->lines, id, f, &loc));
	lines = mt_mem_malloc(mt_srcline_nlevels(&loc) * sizeof(*lines));
	if (!lines) {
		rc = MT_ENOMEM;
		goto cleanup;
	}
	ADD(location_lines(t, id, f, &loc, lines, &n));
	ADD(mapping_id(t, f, loc.file != NULL, loc.ninlined != 0, &mapping));
	ADD(mt_map_upsert(&t->loc_of, id, &v, NULL));
	*out = *(uint64_t *)v = ++t->nlocs;
	rc = add_location(t, *out, mapping, f ? f->ip : 0, lines, n);
cleanup:
	mt_mem_free(lines);
	return rc;
}

/* The id of a pseudo-location ("[no stack]", "[truncated]"), *slot its
 * id once it has one. */
static int pseudo_id(pprof_t *t, uint64_t *slot, const char *name,
		     uint64_t *out)
{
	line_t line = { 0, 0 };
	int rc;

	if (!*slot) {
		if ((rc = function_id(t, name, strlen(name), NULL, &line.fn)) ||
		    (rc = add_location(t, t->nlocs + 1, 0, 0, &line, 1)))
			return rc;
		*slot = ++t->nlocs;
	}
	*out = *slot;
	return MT_OK;
}

static int cmp_stack_id(const void *x, const void *y)
{
	const mt_site_ref_t *a = x, *b = y;

	return (a->stack_id > b->stack_id) - (a->stack_id < b->stack_id);
}

/* Append site s's Sample to samples; ids is room for its stack's
 * locations and one more. */
static int add_sample(pprof_t *t, const mt_analysis_t *a,
		      const mt_site_ref_t *s, uint64_t *ids, mt_buf_t *samples)
{
	const mt_stack_t *st = s->stack;
	const uint64_t values[NVALUES] = {
		s->site->allocations, s->site->bytes_allocated,
		s->site->live_allocations, s->site->live_bytes,
	};
	size_t n = st ? st->nframes : 0, k = 0;
	uint64_t root;
	int rc;

	if (!n)
		ADD(pseudo_id(t, &t->no_stack, "[no stack]", &ids[k++]));
	for (size_t i = 0; i < n; i++)
		ADD(location_id(t, st->frames[i], &ids[k++]));
	/* The root's end, as the other exports mark a cut stack. */
	if (n && a->has_stack_depth && n == a->stack_depth)
		ADD(pseudo_id(t, &t->truncated, "[truncated]", &ids[k++]));
	else if (n) {
		/* A whole stack's outermost frame is a thread's entry point:
		 * _start, in the main binary, for most of them (ld.so's for
		 * the constructors of libraries, libc's for threads). */
		ADD(mapping_id(t, mt_map_find(&t->h->frames, st->frames[n - 1]),
			       0, 0, &root));
		if (root)
			t->maps[root - 1].roots += 1 + s->site->allocations;
	}
	mt_buf_reset(&t->msg);
	ADD(mt_protobuf_add_packed(&t->msg, SAMPLE_LOCATION_ID, ids, k));
	ADD(mt_protobuf_add_packed(&t->msg, SAMPLE_VALUE, values, NVALUES));
	rc = mt_protobuf_add_bytes(samples, PROFILE_SAMPLE, t->msg.data, t->msg.len);
cleanup:
	return rc;
}

static int add_value_type(mt_buf_t *out, mt_buf_t *m, uint32_t field,
			  int64_t type, int64_t unit)
{
	int rc;

	mt_buf_reset(m);
	if ((rc = mt_protobuf_add_int(m, VALUE_TYPE_TYPE, type)) ||
	    (rc = mt_protobuf_add_int(m, VALUE_TYPE_UNIT, unit)))
		return rc;
	return mt_protobuf_add_bytes(out, field, m->data, m->len);
}

static int add_mappings(pprof_t *t, mt_buf_t *out)
{
	mt_buf_t *m = &t->msg;
	size_t main = 0;
	int rc = MT_OK;

	/* profile.proto: mapping[0] is the main binary, taken to be the
	 * module where the stacks of most allocations start (the first on
	 * a tie). */
	for (size_t i = 1; i < t->nmaps; i++)
		if (t->maps[i].roots > t->maps[main].roots)
			main = i;
	for (size_t k = 0; !rc && k < t->nmaps; k++) {
		size_t i = !k ? main : k <= main ? k - 1 : k;
		const mapping_t *mp = &t->maps[i];

		mt_buf_reset(m);
		if ((rc = mt_protobuf_add_uint(m, MAPPING_ID, i + 1)) ||
		    (rc = mt_protobuf_add_uint(m, MAPPING_MEMORY_START, mp->start)) ||
		    (rc = mt_protobuf_add_uint(m, MAPPING_MEMORY_LIMIT, mp->limit)) ||
		    (rc = mt_protobuf_add_int(m, MAPPING_FILENAME, mp->filename)) ||
		    (rc = mt_protobuf_add_int(m, MAPPING_BUILD_ID, mp->build_id)) ||
		    /* Every location has a function: its symbol, or the
		     * flame graph's MODULE+0xOFFSET. */
		    (rc = mt_protobuf_add_bool(m, MAPPING_HAS_FUNCTIONS, 1)) ||
		    (rc = mt_protobuf_add_bool(m, MAPPING_HAS_FILENAMES, mp->has_lines)) ||
		    (rc = mt_protobuf_add_bool(m, MAPPING_HAS_LINE_NUMBERS, mp->has_lines)) ||
		    (rc = mt_protobuf_add_bool(m, MAPPING_HAS_INLINE_FRAMES, mp->has_inlines)))
			break;
		rc = mt_protobuf_add_bytes(out, PROFILE_MAPPING, m->data, m->len);
	}
	return rc;
}

int mt_pprof_render(const mt_analysis_t *a, mt_buf_t *out)
{
	const mt_heap_t *h = &a->heap;
	pprof_t t;
	mt_site_ref_t *sites = NULL;
	uint64_t *ids = NULL;
	size_t nsites = 0, most = 0, mark = out->len;
	mt_buf_t samples = MT_BUF_INIT;
	int64_t index, comment = 0;
	int rc;

	pprof_init(&t, h);
	ADD(mt_protobuf_strtab_init(&t.strs));
	for (int i = 1; i < S_FIXED; i++)
		ADD(intern(&t, fixed_strings[i], &index));
	ADD(mt_sites_list(h, &sites, &nsites));
	if (nsites)
		qsort(sites, nsites, sizeof(*sites), cmp_stack_id);
	for (size_t i = 0; i < nsites; i++)
		if (sites[i].stack && sites[i].stack->nframes > most)
			most = sites[i].stack->nframes;
	ids = mt_mem_malloc((most + 1) * sizeof(*ids));
	if (!ids) {
		rc = MT_ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < nsites; i++) {
		const mt_site_t *s = sites[i].site;

		if (s->allocations || s->bytes_allocated ||
		    s->live_allocations || s->live_bytes)
			ADD(add_sample(&t, a, &sites[i], ids, &samples));
	}
	/* The program, for `pprof -comments` and the raw listing: interned
	 * before the table is written, as every string. */
	if (mt_identity_known(&a->identity)) {
		mt_buf_reset(&t.msg);
		ADD(mt_buf_add_str(&t.msg, "program: "));
		ADD(mt_identity_describe(&a->identity, "", MT_IDENTITY_PIDS,
					 &t.msg));
		ADD(mt_protobuf_strtab_index(&t.strs, t.msg.data, t.msg.len,
					     &comment));
	}
	ADD(add_value_type(out, &t.msg, PROFILE_SAMPLE_TYPE, S_ALLOC_OBJECTS, S_COUNT));
	ADD(add_value_type(out, &t.msg, PROFILE_SAMPLE_TYPE, S_ALLOC_SPACE, S_BYTES));
	ADD(add_value_type(out, &t.msg, PROFILE_SAMPLE_TYPE, S_INUSE_OBJECTS, S_COUNT));
	ADD(add_value_type(out, &t.msg, PROFILE_SAMPLE_TYPE, S_INUSE_SPACE, S_BYTES));
	ADD(mt_buf_add(out, samples.data, samples.len));
	ADD(add_mappings(&t, out));
	ADD(mt_buf_add(out, t.locs.data, t.locs.len));
	ADD(mt_buf_add(out, t.funcs.data, t.funcs.len));
	ADD(mt_protobuf_strtab_add(out, PROFILE_STRING_TABLE, &t.strs));
	if (a->identity.has_time && a->identity.time_ns <= INT64_MAX)
		ADD(mt_protobuf_add_int(out, PROFILE_TIME_NANOS,
					(int64_t)a->identity.time_ns));
	ADD(mt_protobuf_add_int(out, PROFILE_DURATION_NANOS, (int64_t)h->duration_ns));
	ADD(add_value_type(out, &t.msg, PROFILE_PERIOD_TYPE, S_SPACE, S_BYTES));
	/* A sampled trace's figures are already the heap's estimates, as a
	 * Go heap profile's are; its period is the mean bytes between two
	 * samples, as Go's is. */
	ADD(mt_protobuf_add_int(out, PROFILE_PERIOD,
				h->sample_bytes ? (int64_t)h->sample_bytes : 1));
	rc = mt_protobuf_add_int(out, PROFILE_COMMENT, comment);
cleanup:
	if (rc)
		mt_buf_truncate(out, mark);
	mt_buf_release(&samples);
	mt_mem_free(ids);
	mt_mem_free(sites);
	pprof_release(&t);
	return rc;
}

int mt_pprof_gzip(const void *p, size_t n, mt_buf_t *out)
{
	unsigned char chunk[16384];
	const unsigned char *in = p;
	size_t left = n, mark = out->len;
	z_stream z;
	int zr, rc = MT_OK;

	memset(&z, 0, sizeof(z));
	z.zalloc = mt_mem_zlib_alloc;
	z.zfree = mt_mem_zlib_free;
	/* 16 + 15: a gzip wrapper; deflate's header has no time and no
	 * name, so a profile is the same bytes every time. */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS,
			 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return MT_ENOMEM;
	do {
		if (!z.avail_in && left) {
			uInt k = left > UINT_MAX ? UINT_MAX : (uInt)left;

			z.next_in = (Bytef *)in;
			z.avail_in = k;
			in += k;
			left -= k;
		}
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zr = deflate(&z, left || z.avail_in ? Z_NO_FLUSH : Z_FINISH);
		if (zr == Z_STREAM_ERROR) {
			rc = MT_ENOMEM; /* never: the stream is ours */
			break;
		}
		rc = mt_buf_add(out, chunk, sizeof(chunk) - z.avail_out);
	} while (!rc && zr != Z_STREAM_END);
	deflateEnd(&z);
	if (rc)
		mt_buf_truncate(out, mark);
	return rc;
}
