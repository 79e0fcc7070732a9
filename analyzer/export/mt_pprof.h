/*
 * mt_pprof: a trace's sites as a pprof profile (google/pprof's
 * profile.proto, encoded with mt_protobuf), for `memtrace export pprof`:
 * what `go tool pprof`, Pyroscope, Parca and Grafana read.
 *
 *   sample types  alloc_objects/count, alloc_space/bytes,
 *                 inuse_objects/count, inuse_space/bytes, as Go's heap
 *                 profiles name them; inuse is what is live at the end of
 *                 the trace.  No default_sample_type: readers take the
 *                 last one, inuse_space, as for Go's heap profiles.
 *   samples       one per site with a figure that is not 0, in stack id
 *                 order: its allocations, bytes_allocated,
 *                 live_allocations and live_bytes.  So each figure sums
 *                 to the summary's allocations, bytes_allocated,
 *                 live_allocations and live_bytes.
 *   locations     one per frame id, leaf first in a sample: its ip as the
 *                 address, its mapping, one line: the function named as
 *                 the flame graph names it (mt_flame_add_frame(): the
 *                 demangled symbol when one contains the call, else
 *                 MODULE+0xOFFSET) with libdw's file and line.  Calls
 *                 inlined at the frame (mt_srcline's inlines) come first
 *                 as lines of their own, innermost first, each at the
 *                 line where it is, the frame's function last at the
 *                 outermost call's site.  A site without a stack is the
 *                 one location "[no stack]"; a stack cut at the depth
 *                 limit ends with "[truncated]", as in the other
 *                 exports.
 *   mappings      one per module and load address (ip - module_offset):
 *                 its path, from its load address to past its highest
 *                 frame, file offset 0, has_inline_frames when a
 *                 location has inlined lines; first the module where the
 *                 whole stacks of most allocations start (_start's), as
 *                 the main binary; its build id when the trace records
 *                 one (frame events' build_id).
 *   functions     one per distinct name and file.
 *
 * comment: "program: EXE ARGS (pid N, parent M)" (mt_identity) and
 * time_nanos trace.start's time_ns, when the trace names them;
 * duration_nanos is the trace's duration; period_type space/bytes, period
 * 1 (every allocation is in the trace), or a sampled trace's sample_bytes
 * (its figures are the summary's estimates, as in a Go heap profile).
 *
 * This module renders into a buffer and prints nothing; it must never
 * write half a profile (out is as it was on failure), and the same trace
 * gives the same bytes every time.
 */
#ifndef MT_PPROF_H
#define MT_PPROF_H

#include "../model/mt_analysis.h"
#include "../base/mt_buf.h"

/* Append a's profile, uncompressed profile.proto bytes.  MT_OK or
 * MT_ENOMEM (out as it was). */
int mt_pprof_render(const mt_analysis_t *a, mt_buf_t *out);

/* Append the n bytes at p gzip-compressed (zlib's deflate, a gzip
 * header with no name and no time), as profile.proto files are stored.
 * MT_OK or MT_ENOMEM (out as it was). */
int mt_pprof_gzip(const void *p, size_t n, mt_buf_t *out);

#endif
