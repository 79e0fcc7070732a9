/*
 * mt_utf8: strict UTF-8 (RFC 3629), shared by the preload's line writer,
 * the analyzer's reader and its SVG writer: one definition of what a
 * trace's and a row's text may hold.
 *
 * Strict means what a strict decoder (Python's, a browser's) accepts: no
 * overlong forms, no surrogates (U+D800 to U+DFFF), nothing above
 * U+10FFFF.  Like mt_fmt, these never allocate, lock or touch errno: the
 * preload calls them from inside malloc.
 */
#ifndef MT_UTF8_H
#define MT_UTF8_H

#include <stddef.h>

/* The length of the UTF-8 sequence that starts s (1 to 4 bytes, at most
 * n; n >= 1), or 0 when none valid does. */
size_t mt_utf8_len(const unsigned char *s, size_t n);

/* Whether the n bytes at s are valid UTF-8 as a whole. */
int mt_utf8_valid(const char *s, size_t n);

#endif
