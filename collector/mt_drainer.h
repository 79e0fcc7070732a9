/*
 * mt_drainer: the drainer words (common/mt_ring.h) of the rings this
 * process drains, in its robust futex list, so that the kernel marks
 * each one when the process ends, however it ends, and each program
 * learns it without a system call.
 *
 * The list replaces libc's own for the calling thread (the collector has
 * no robust mutex), and only the thread that drains may call these: the
 * kernel walks the list of the thread that ends.  The entries live in the
 * rings' headers, next to their words, since the list gives one offset
 * from an entry to its word for all of them.  The kernel walks at most
 * 2,048 entries: rings past that are marked by nothing, and their
 * programs fall back to asking the kernel (mt_record.c).
 */
#ifndef MT_DRAINER_H
#define MT_DRAINER_H

#include "../common/mt_ring.h"

/* Put the calling thread's id in h's drainer word and h in the list.
 * Returns 0, or -errno when the kernel has no robust lists (the word is
 * left 0 then). */
int mt_drainer_take(mt_ring_hdr_t *h);

/* Take h out of the list, before its ring is unmapped (the kernel would
 * otherwise write into whatever is mapped there later). */
void mt_drainer_release(mt_ring_hdr_t *h);

#endif
