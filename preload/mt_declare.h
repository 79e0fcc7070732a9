/*
 * mt_declare: the declarations of frames and stacks (format.md's "frame"
 * and "stack" records): the id of a stack an event carries, its frames
 * named and declared first when they are new.
 *
 * Invariants:
 * - A frame or stack is declared (its record reserved) before any event
 *   that uses it: an id is published in the tables (mt_stack.h) under the
 *   table lock (mt_lock.h), only after its declaration's reservation, and
 *   other threads learn ids only from the tables or their own cache.
 * - A frame is named (mt_symbol.h, which may take the loader's lock and
 *   open files in a child) with no lock held and cancellation disabled;
 *   only its record is made under the table lock, unless another thread
 *   declared it meanwhile.
 * - Never allocates through malloc: the lines are made in a buffer of
 *   this module's, under the table lock.
 * - Declares nothing once tracing is off (mt_trace_active()); a record
 *   the ring refuses is the core's to handle (mt_trace_collector_lost).
 */
#ifndef MT_DECLARE_H
#define MT_DECLARE_H

#include <stddef.h>
#include <stdint.h>

#include "../common/mt_jsonl.h"
#include "mt_symbol.h"

/* The longest declaration line: a frame's symbol (2048 bytes) and module
 * (1024), its build id in hex, and the fixed fields.  The core makes its
 * header lines in a buffer of the same size. */
#define MT_DECLARE_SYMBOL_CAP 2048
#define MT_DECLARE_MODULE_CAP 1024
#define MT_DECLARE_LINE_CAP (MT_DECLARE_SYMBOL_CAP + MT_DECLARE_MODULE_CAP + \
			     MT_JSONL_FIXED_MAX + 64 + 2 * MT_SYMBOL_BUILD_ID_MAX + 16)

/* The buffer lines made under the table lock are made in: the
 * declarations', and the core's header lines (mt_trace.c).  One buffer:
 * a forked child writes both at its start, and each page it writes
 * first is copied. */
extern char mt_declare_line[MT_DECLARE_LINE_CAP];

/* Record the line of len bytes made in mt_declare_line (with seq 0) as a
 * text record; a ring the collector has left stops tracing
 * (mt_trace_collector_lost).  Table lock held. */
void mt_declare_record_line(size_t len);

/* The id of the stack ips[0..n), declaring it (and its new frames) first
 * when it is new; 0 when n is 0 or the stack has no id (no memory: the
 * loss is counted in the ring's dropped count).  Takes the table lock
 * unless the thread's cache knows the stack. */
uint64_t mt_declare_stack(const uint64_t *ips, int n);

/* A module was unloaded: the module table is read again at the next
 * frame named, and the frames and stacks declared so far are forgotten
 * (under the table lock, which must not be held), so that a return
 * address in a module loaded at its addresses is declared again, by its
 * own name, under a new id. */
void mt_declare_forget(void);

#endif
