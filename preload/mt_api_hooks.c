/*
 * mt_api_hooks: the entry points include/memtrace.h finds in
 * libmtpreload.so with dlsym, and nothing else.  Like the libc hooks
 * (mt_hooks.c) each captures its caller's stack in its own frame, records
 * nothing when its thread is already inside the tracer or tracing is off,
 * and leaves errno as it found it.  Their names and signatures are the
 * header's ABI: change them only with the header.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "mt_api.h"
#include "mt_real.h"
#include "mt_stack.h"
#include "mt_trace.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT unsigned int memtrace_api_allocator(const char *name)
{
	int saved = errno;
	uint32_t id;

	if (mt_real_resolve() < 0 || !mt_trace_enter()) {
		errno = saved;
		return 0;
	}
	id = mt_api_allocator(name);
	mt_trace_leave();
	errno = saved;
	return id;
}

EXPORT void memtrace_api_alloc(unsigned int id, const void *ptr, size_t size)
{
	mt_stack_buf_t st;
	int saved = errno, n;

	if (!ptr || !mt_trace_enter()) {
		errno = saved;
		return;
	}
	n = mt_stack_capture(&st, mt_trace_stack_depth());
	mt_api_alloc(id, ptr, size, mt_stack_ips(&st), n);
	mt_trace_leave();
	errno = saved;
}

EXPORT void memtrace_api_free(unsigned int id, const void *ptr)
{
	int saved = errno;

	if (!ptr || !mt_trace_enter()) {
		errno = saved;
		return;
	}
	mt_api_free(id, ptr);
	mt_trace_leave();
	errno = saved;
}

EXPORT void memtrace_api_realloc(unsigned int id, const void *old_ptr,
				 const void *new_ptr, size_t size)
{
	mt_stack_buf_t st;
	int saved = errno, n;

	if (!mt_trace_enter()) {
		errno = saved;
		return;
	}
	n = mt_stack_capture(&st, mt_trace_stack_depth());
	mt_api_realloc(id, old_ptr, new_ptr, size, mt_stack_ips(&st), n);
	mt_trace_leave();
	errno = saved;
}
