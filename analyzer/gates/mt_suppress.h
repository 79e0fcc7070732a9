/*
 * mt_suppress: which sites' live bytes are known runtime allocations, not
 * leaks, for `report`, `html`, `gate` and `diff` (never for the summary, capture
 * or repetition rows, which stay raw).  A suppression is LSan's
 * `leak:PATTERN`: a site matches when any frame of its stack has a
 * symbol or a module that PATTERN matches, where PATTERN matches a string
 * that contains it, `*` stands for any run of characters, a leading `^`
 * anchors it at the start and a trailing `$` at the end (LSan's
 * TemplateMatch).
 *
 * The default list (mt_suppress_defaults()) names what glibc allocates
 * for itself and never frees: the loader's TLS blocks of threads
 * (_dl_allocate_tls, allocate_dtv, _dl_update_slotinfo for dlopened
 * modules' TLS), a static program's TLS (__libc_setup_tls), and stdio's
 * stream buffers (_IO_file_doallocate).  libstdc++'s emergency pool is not
 * in it: the preload frees it at exit (__gnu_cxx::__freeres).
 *
 * Invariants: a list holds copies of its patterns (mt_mem memory);
 * matching allocates nothing; nothing here prints.
 */
#ifndef MT_SUPPRESS_H
#define MT_SUPPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "../gates/mt_profile.h"
#include "../model/mt_sites.h"
#include "../model/mt_srcline.h"

typedef struct {
	char **patterns;
	size_t n, cap;
} mt_suppress_t;

/* What a list left out of the live figures. */
typedef struct {
	uint64_t sites, live_allocations, live_bytes;
} mt_suppress_left_t;

#define MT_SUPPRESS_INIT { NULL, 0, 0 }

/* The default patterns, NULL-terminated. */
extern const char *const mt_suppress_defaults[];

void mt_suppress_release(mt_suppress_t *s);

/* Add one pattern (copied).  MT_OK or MT_ENOMEM. */
int mt_suppress_add(mt_suppress_t *s, const char *pattern, size_t len);

/* Add mt_suppress_defaults.  MT_OK or MT_ENOMEM. */
int mt_suppress_add_defaults(mt_suppress_t *s);

/*
 * Add the suppressions of a file's text: one a line, `leak:PATTERN`;
 * blank lines and lines starting with `#` (after blanks) are skipped, as
 * are LSan's other kinds (`race:`, `thread:`...), which say nothing of
 * leaks.  Returns MT_OK; MT_ENOMEM; or 1 with a sentence in why (the
 * line at fault: no `kind:`, or an empty pattern).
 */
int mt_suppress_parse(mt_suppress_t *s, const char *text, size_t len,
		      char *why, size_t cap);

/* Whether pattern matches str, as LSan matches a suppression. */
int mt_suppress_glob(const char *pattern, const char *str);

/* Whether a frame (symbol and module, either NULL) matches any pattern. */
int mt_suppress_frame(const mt_suppress_t *s, const char *symbol,
		      const char *module);

/* "left out: SIZE in N blocks from K sites, known runtime allocations
 * (suppressions)" without the line's start or end: the count every
 * command that suppresses prints.  MT_OK or MT_ENOMEM. */
int mt_suppress_add_left_out(mt_buf_t *b, const mt_suppress_left_t *left);

/*
 * Whether s matches a frame of ref's stack in heap h: its symbol in the
 * trace, its function in the module's debug information (through lines),
 * or its module; *hit 0 for a site with nothing live.  For report and
 * html, which read the trace.  MT_OK or MT_ENOMEM.
 */
int mt_suppress_site(const mt_suppress_t *s, const mt_heap_t *h,
		     mt_srcline_t *lines, const mt_site_ref_t *ref, int *hit);

/*
 * Leave the matching sites of p out of its live figures: each such
 * site's live_bytes and live_allocations become 0 and are taken from the
 * totals, and *left counts them (sites with nothing live are not
 * counted).  For gate and diff, after mt_profile_load().
 */
void mt_suppress_profile(const mt_suppress_t *s, mt_profile_t *p,
			 mt_suppress_left_t *left);

#endif
