/*
 * mt_export: a trace's sites in the file formats other tools open, for
 * `memtrace export FORMAT TRACE` (cmd/export.c):
 *
 *   folded      mt_flame_render() with its default metric, allocations:
 *               exactly `memtrace flamegraph TRACE --folded` (flamegraph.pl,
 *               inferno, speedscope);
 *   speedscope  speedscope's JSON file format
 *               (https://www.speedscope.app/file-format-schema.json): four
 *               "sampled" profiles over one frame table, in this order:
 *               "bytes live at the peak" (unit bytes, each site weighs
 *               mt_heap_site_at_peak(), its share of the global peak;
 *               the profile speedscope opens), "bytes leaked" (unit
 *               bytes, its live_bytes at the end), "bytes allocated"
 *               (unit bytes, its bytes_allocated) and "allocation calls"
 *               (unit none, its calls: allocations, resizes and remaps,
 *               as the flame graph's default metric); a sample is a
 *               site's stack, root first;
 *   dhat        DHAT's JSON, dhatFileVersion 2, mode "heap" (Valgrind's
 *               dh_view.html, the Firefox Profiler): one program point a
 *               site, frames innermost first, "ftbl"[0] "[root]";
 *               "bklt" true (every figure of a block's life is known),
 *               "bkacc" false (no reads or writes: "rb", "wb" and "acc"
 *               left out, as the format says);
 *   pprof       gzip-compressed profile.proto (mt_pprof: go tool pprof,
 *               Pyroscope, Parca): allocations, bytes allocated and what
 *               is live at the end, a sample a site.
 *
 * Frames are named as the flame graph names them (mt_flame_add_frame());
 * speedscope's and DHAT's frames add file:line where libdw knows it.  A
 * site without a stack is the frame "[no stack]", a stack cut at the
 * depth limit gets "[truncated]" as its outermost frame, as in the flame
 * graph.  Sites come in stack id order (site 0 first), so an export of a
 * trace is the same bytes every time.
 *
 * Totals: speedscope's profiles sum to the summary's peak_live_bytes,
 * live_bytes, bytes_allocated and allocations + resizes + remaps (a site
 * with a figure of 0 is left out of that profile, as the flame graph
 * leaves it out, and adds nothing).  DHAT counts blocks as the heap does
 * (mt_heap.h): a resize or remap ends the block and makes a new one at
 * the realloc's site, so a program point's tbk is its calls and tb its
 * bytes_allocated (they sum to allocations + resizes + remaps and to
 * bytes_allocated); tl sums its blocks' lifetimes in ns (from the event
 * that made each to the one that ended it, or to the trace's end, te;
 * an event without t happens at the last t before it), weighed as the
 * heap weighs a block; mb is its peak_live_bytes, mbk its live blocks
 * when its live bytes first reached mb; gb and gbk its live bytes and
 * blocks at the global peak (the event tg names, peak_seq), summing to
 * peak_live_bytes; eb and ebk its live_bytes and live_allocations.
 *
 * This module renders into a buffer and prints nothing; it must never
 * write half a document (out is as it was on failure).
 */
#ifndef MT_EXPORT_H
#define MT_EXPORT_H

#include <stdint.h>

#include "../model/mt_analysis.h"
#include "../base/mt_buf.h"
#include "../base/mt_map.h"

typedef enum {
	MT_EXPORT_FOLDED,
	MT_EXPORT_SPEEDSCOPE,
	MT_EXPORT_DHAT,
	MT_EXPORT_PPROF,
} mt_export_format_t;

/* The format named name ("folded", "speedscope", "dhat", "pprof"): 0 and
 * *out set, or -1 for any other name. */
int mt_export_format_parse(const char *name, mt_export_format_t *out);

/* A site's figures the heap does not keep, which DHAT's program point
 * needs: the observer keeps them by the heap's site index. */
typedef struct {
	uint64_t lifetimes; /* ns x blocks, of its blocks ended so far */
	uint64_t max_bytes, max_blocks; /* when its live bytes first peaked */
	uint64_t blocks; /* its live blocks after the last event that moved it */
	/* Its live blocks at the peak_epoch-th global peak, saved the first
	 * time it changes after that peak (mt_site_t's at_peak, for blocks). */
	uint64_t at_peak_blocks, peak_epoch;
} mt_export_site_t;

/*
 * What the pass tells an export beyond the heap: the time (t, ns since
 * trace.start) of the global peak, for DHAT's "tg"; and for DHAT alone,
 * each live block's start and each site's mt_export_site_t.  Memory is
 * proportional to live blocks and sites, as the heap's.  An allocation
 * that fails in the observer (which cannot fail the pass) is kept in
 * failed, and the render then fails with MT_ENOMEM.
 */
typedef struct {
	uint64_t peak_t;
	uint64_t now;      /* the last t seen */
	int follow;        /* keep blocks and sites (DHAT) */
	int failed;
	mt_export_site_t *sites; /* by site index (0: no stack) */
	size_t nsites;
	mt_map_t allocators; /* allocator id -> mt_map_t: ptr -> its block */
} mt_export_times_t;

/* Ready t for a pass whose export is in format fmt. */
void mt_export_times_init(mt_export_times_t *t, mt_export_format_t fmt);
void mt_export_times_release(mt_export_times_t *t);

/* The pass's observer that fills an mt_export_times_t (ctx). */
void mt_export_observe(void *ctx, const mt_heap_t *h, const mt_event_t *ev);

/*
 * Append the export of a (valid evidence) in format fmt.  The document's
 * name (speedscope), command and pid (DHAT) and comment (pprof) are the
 * program a->identity names; path is the trace's path, the name and
 * command of a trace that names none.  times is the pass's, observed with
 * mt_export_observe() (NULL but for dhat).  MT_OK or MT_ENOMEM (out as it
 * was).
 */
int mt_export_render(const mt_analysis_t *a, mt_export_format_t fmt,
		     const char *path, const mt_export_times_t *times,
		     mt_buf_t *out);

#endif
