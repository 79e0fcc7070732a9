/*
 * mt_demangle: C++ names as people write them (`operator new(unsigned
 * long)`, `app::build[abi:cxx11](int)`), for every command that shows a
 * frame to a person: report, flamegraph, the hints of gate and diff, the
 * stack of oom-fail.  One function, here, so that every command names a
 * frame the same way.
 *
 * It must never change what a machine reads: the summary, capture and
 * repetition rows, diff's JSON and the keys that match sites between two
 * traces keep the trace's raw names.  A name that is not a mangled C++
 * name (no "_Z" prefix), or that libstdc++ cannot demangle, is shown as
 * it is.
 */
#ifndef MT_DEMANGLE_H
#define MT_DEMANGLE_H

#include "../base/mt_buf.h"

/* The demangled form of name: *out is an mt_mem string the caller frees,
 * or NULL when name is to be shown as it is.  MT_OK or MT_ENOMEM. */
int mt_demangle_name(const char *name, char **out);

/* Append name as a person reads it (demangled when it can be).  MT_OK or
 * MT_ENOMEM; on failure b is as it was. */
int mt_demangle_add(mt_buf_t *b, const char *name);

#endif
