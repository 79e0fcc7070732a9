/*
 * mt_export: a trace's sites in the file formats other tools open, for
 * `memtrace export FORMAT TRACE` (cmd/export.c):
 *
 *   folded      mt_flame_render() with its default metric, allocations:
 *               exactly `memtrace flamegraph TRACE` (flamegraph.pl,
 *               inferno, speedscope);
 *   speedscope  speedscope's JSON file format
 *               (https://www.speedscope.app/file-format-schema.json): two
 *               "sampled" profiles over one frame table, "bytes allocated"
 *               (unit bytes, each site weighs its bytes_allocated) and
 *               "allocation calls" (unit none, each site weighs its calls:
 *               allocations, resizes and remaps, as the flame graph's
 *               default metric); a sample is a site's stack, root first;
 *   dhat        DHAT's JSON, dhatFileVersion 2, mode "heap" (Valgrind's
 *               dh_view.html, the Firefox Profiler): one program point a
 *               site, frames innermost first, "ftbl"[0] "[root]";
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
 * Totals: speedscope's byte weights sum to the summary's bytes_allocated
 * and its call weights to allocations + resizes + remaps (a site with a
 * figure of 0 is left out of that profile, as the flame graph leaves it
 * out, and adds nothing); DHAT's tb and tbk sum to bytes_allocated and
 * allocations, gb to peak_live_bytes, eb and ebk to live_bytes and
 * live_allocations.  What memtrace does not keep is written as 0 and
 * documented in docs/reports.md: tl (block lifetimes), mbk and gbk (a
 * site's blocks at its own peak and at the global one).
 *
 * This module renders into a buffer and prints nothing; it must never
 * write half a document (out is as it was on failure).
 */
#ifndef MT_EXPORT_H
#define MT_EXPORT_H

#include <stdint.h>

#include "../model/mt_analysis.h"
#include "../base/mt_buf.h"

typedef enum {
	MT_EXPORT_FOLDED,
	MT_EXPORT_SPEEDSCOPE,
	MT_EXPORT_DHAT,
	MT_EXPORT_PPROF,
} mt_export_format_t;

/* The format named name ("folded", "speedscope", "dhat", "pprof"): 0 and
 * *out set, or -1 for any other name. */
int mt_export_format_parse(const char *name, mt_export_format_t *out);

/* What the pass tells an export beyond the heap: the time (t, ns since
 * trace.start) of the global peak, for DHAT's "tg". */
typedef struct {
	uint64_t peak_t;
} mt_export_times_t;

/* The pass's observer that fills an mt_export_times_t (ctx). */
void mt_export_observe(void *ctx, const mt_heap_t *h, const mt_event_t *ev);

/*
 * Append the export of a (valid evidence) in format fmt.  The document's
 * name (speedscope), command and pid (DHAT) and comment (pprof) are the
 * program a->identity names; path is the trace's path, the name and
 * command of a trace that names none.  times may be NULL (tg then 0).
 * MT_OK or MT_ENOMEM (out as it was).
 */
int mt_export_render(const mt_analysis_t *a, mt_export_format_t fmt,
		     const char *path, const mt_export_times_t *times,
		     mt_buf_t *out);

#endif
