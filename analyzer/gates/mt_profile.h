/*
 * mt_profile: what `gate` and `diff` compare, read from either kind of
 * file a CI job keeps: a memtrace trace (through mt_analysis_run, one
 * streaming pass) or a summary file written earlier by `memtrace summary`
 * or `memtrace capture` (its summary line, then any site lines; read with
 * json-c).  Both give the summary line's totals and status, and the sites
 * with their symbolized frames.
 *
 * Invariants: totals mean exactly what the summary line's fields of the
 * same names mean (format.md section 4); a trace gives every site with any
 * allocation (as --include-zero-live lists them), a summary file the site
 * lines it holds; sites come ranked as `memtrace summary` ranks them (live
 * bytes, then bytes allocated, then stack id), and a summary file's in its
 * own order.  Every string a profile hands out lives as long as the
 * profile, which must therefore not be copied or moved once loaded.
 */
#ifndef MT_PROFILE_H
#define MT_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "../model/mt_analysis.h"
#include "../model/mt_srcline.h"
#include "../base/mt_buf.h"

struct json_object;

/* The summary line's integer fields, in format.md's order. */
typedef enum {
	MT_PF_EVENTS,
	MT_PF_THREADS,
	MT_PF_ALLOCATIONS,
	MT_PF_FREES,
	MT_PF_RESIZES,
	MT_PF_REMAPS,
	MT_PF_FAILED_ALLOCATIONS,
	MT_PF_UNKNOWN_FREES,
	MT_PF_OVERLAPPING_ALLOCS,
	MT_PF_MALFORMED_EVENTS,
	MT_PF_BYTES_ALLOCATED,
	MT_PF_BYTES_FREED,
	MT_PF_LIVE_ALLOCATIONS,
	MT_PF_LIVE_BYTES,
	MT_PF_PEAK_LIVE_BYTES,
	MT_PF_PEAK_LIVE_ALLOCATIONS,
	MT_PF_PEAK_SEQ,
	MT_PF_TEMPORARY_ALLOCATIONS,
	MT_PF_DURATION_NS,
	MT_PF_COUNT
} mt_profile_field_t;

/* The field's name in the summary line ("peak_live_bytes"). */
const char *mt_profile_field_name(mt_profile_field_t f);

/* "note: WHO is sampled (one allocation recorded per SIZE allocated, on
 * average): its figures are estimates\n", for a sampled profile's reader;
 * nothing when bytes is 0. */
int mt_profile_add_sampled_note(mt_buf_t *b, const char *who, uint64_t bytes);

typedef struct {
	const char *symbol; /* NULL when the trace gave none */
	const char *module; /* the full path, or NULL */
	/* A frame without a symbol: its offset in module (has_offset). */
	uint64_t offset;
	int has_offset;
	/* From a trace: the frame itself and its id, to unfold the calls
	 * inlined there (mt_profile_add_frames()); NULL from a summary. */
	const mt_frame_t *trace_frame;
	uint64_t frame_id;
} mt_profile_frame_t;

/* Fill f from a trace's frame (NULL: unknown). */
void mt_profile_frame_of(mt_profile_frame_t *f, const mt_frame_t *tf);

typedef struct {
	uint64_t stack_id; /* the trace's id (0: allocations without a stack) */
	uint64_t allocations; /* alloc events, the site line's allocations */
	/* Its calls (mt_heap_site_calls()): allocations, and the resizes and
	 * remaps made from it.  A summary file's site line does not count
	 * its reallocs, so there calls is allocations: compare calls only
	 * between two traces (MT_PROFILE_TRACE). */
	uint64_t calls;
	uint64_t bytes_allocated;
	uint64_t live_allocations, live_bytes, peak_live_bytes;
	/* Its live bytes at the moment of the run's peak (peak_seq), its
	 * part of peak_live_bytes (mt_heap_site_at_peak()): from a trace
	 * alone (mt_profile_t.has_at_peak); a site line does not say. */
	uint64_t at_peak;
	size_t nframes;
	const mt_profile_frame_t *frames; /* innermost first */
} mt_profile_site_t;

typedef enum {
	MT_PROFILE_TRACE = 1,
	MT_PROFILE_SUMMARY,
} mt_profile_source_t;

#define MT_PROFILE_WHY_MAX 320

typedef struct {
	mt_profile_source_t source;
	int invalid;                    /* not valid evidence */
	char why[MT_PROFILE_WHY_MAX];   /* why not, when invalid */
	int error_errno;                /* errno of an MT_EIO result */
	const char *status;             /* "complete" or the first caveat */
	const char *message;            /* the status's sentence; NULL when complete */
	uint64_t total[MT_PF_COUNT];
	/* A sampled trace's mean (its summary's "sample_bytes"), 0 when not
	 * sampled: the totals and sites are then estimates. */
	uint64_t sample_bytes;
	/* The sites' at_peak are known: a trace, not a summary file. */
	int has_at_peak;
	mt_profile_site_t *sites;
	size_t nsites;

	/* private */
	mt_analysis_t analysis;
	int have_analysis;
	struct json_object **lines;     /* a summary file's parsed lines */
	size_t nlines, lines_cap;
	mt_profile_frame_t *frame_store;
	/* A trace's frames' inlined calls, looked up when a list of frames
	 * is written (names only: no line tables are read). */
	mt_srcline_t *srclines;
} mt_profile_t;

/*
 * Load path, a trace or a summary file, whichever its first line says
 * ("-", standard input, is always read as a trace).  Returns MT_OK (and
 * p->invalid says whether it is evidence at all), MT_EIO (p->error_errno
 * says why; ENOENT for a missing file) or MT_ENOMEM.  Whatever it returns,
 * mt_profile_release() must follow.
 */
int mt_profile_load(mt_profile_t *p, const char *path);

/* The same; from a trace, with the blocks of the allocators named
 * allocator alone in its totals and sites (mt_analysis_run_allocator();
 * NULL: every allocator's).  A summary file is read whole: its figures
 * are every allocator's, which the caller must not take for one's. */
int mt_profile_load_allocator(mt_profile_t *p, const char *path,
			      const char *allocator);

/* The heap of a profile loaded from a trace (its allocators, for
 * --allocator's check); NULL for a summary file. */
const mt_heap_t *mt_profile_heap(const mt_profile_t *p);
void mt_profile_release(mt_profile_t *p);

/*
 * One line of a JSON-lines file of ours (a summary or repetitions file),
 * as json-c reads it, strictly and with UTF-8 validated, through tok (a
 * json_tokener).  Returns MT_OK with *out the object, or *out NULL and
 * *why a static sentence when the line is not a JSON object or holds a
 * number beyond 64 bits (json-c would clamp it); or MT_ENOMEM.  The
 * caller puts *out.
 */
int mt_profile_json_line(void *tok, const char *line, size_t len,
			 struct json_object **out, const char **why);

/* A new json_tokener for mt_profile_json_line, or NULL (out of memory). */
void *mt_profile_json_tokener(void);
void mt_profile_json_tokener_free(void *tok);

/*
 * Read a summary line's object: every field of mt_profile_field_t (a
 * non-negative integer), status (a string: "complete" or a caveat name)
 * and message (a string or null; the pointers live as long as obj).
 * Returns 0, or -1 with a sentence in why (the field at fault).
 */
int mt_profile_read_summary(struct json_object *obj,
			    uint64_t total[MT_PF_COUNT], const char **status,
			    const char **message, char *why, size_t cap);

/*
 * A site's frames for a person: "symbol (module) < caller (module) < ...",
 * innermost first, a C++ symbol demangled (mt_demangle), each module by
 * its file name alone, "?" for what is
 * unknown, at most max frames and then "< ... (N more)"; "(no stack)" for
 * a site without frames.  With p a profile of a trace, each call inlined
 * at a frame is a frame of its own, named by the module's debug
 * information (mt_srcline, as report and the exports unfold them), and
 * the frames counted are these levels; p NULL, or a summary file's: the
 * trace's frames as they are.
 */
int mt_profile_add_frames(mt_buf_t *b, const mt_profile_t *p,
			  const mt_profile_site_t *s, size_t max);

/* The file name of a module path (after its last '/'). */
const char *mt_profile_module_name(const char *module);

#endif
