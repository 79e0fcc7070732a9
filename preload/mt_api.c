/*
 * mt_api: the table of a program's own allocators and their events
 * (mt_api.h).  It must never call malloc, never hold the table lock while
 * unwinding, and never record an allocator's event before its
 * declaration in the same trace.
 */
#include "mt_api.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../common/mt_jsonl.h"
#include "mt_layout.h"
#include "mt_prefault.h"
#include "mt_real.h"
#include "mt_stack.h"
#include "mt_trace.h"

typedef struct {
	char name[MT_API_NAME_MAX + 1];
	size_t len;
	/* The trace generation it is declared in; 0: none yet. */
	_Atomic uint64_t declared;
} allocator_t;

/* By id; element 0 unused.  Written under the table lock; count is read
 * without it, so an entry is filled before count covers it. */
static allocator_t table[MT_API_MAX_ALLOCATORS + 1] MT_LAYOUT_COLD;
MT_PREFAULT_COLD(table);
static _Atomic uint32_t count;
static atomic_int warned_full;
/* A declaration's line, made under the table lock: a name's bytes may
 * each take six escaped. */
static char line[MT_JSONL_FIXED_MAX + 6 * MT_API_NAME_MAX] MT_LAYOUT_APART;

/* Record id's declaration in the current trace unless it has one there.
 * Table lock held. */
static void declare_locked(uint32_t id)
{
	allocator_t *a = &table[id];
	uint64_t gen = mt_stack_trace_generation();
	mt_jsonl_t l;

	if (atomic_load_explicit(&a->declared, memory_order_relaxed) == gen ||
	    !mt_trace_active())
		return;
	mt_jsonl_begin(&l, line, sizeof(line), 0, "allocator");
	mt_jsonl_u64(&l, "allocator_id", id);
	mt_jsonl_str(&l, "name", a->name, a->len, 0);
	mt_trace_declare_locked(line, mt_jsonl_end(&l));
	atomic_store_explicit(&a->declared, gen, memory_order_release);
}

/* Whether id may be used now: an id given, declared in this trace (now,
 * when it was not yet). */
static int usable(uint32_t id)
{
	if (!id || id > atomic_load_explicit(&count, memory_order_acquire))
		return 0;
	if (__builtin_expect(atomic_load_explicit(&table[id].declared,
						  memory_order_acquire) ==
				     mt_stack_trace_generation(),
			     1))
		return 1;
	mt_trace_lock();
	declare_locked(id);
	mt_trace_unlock();
	return 1;
}

/* Said once, through the write system call: stdio could allocate, and
 * libc's write is a cancellation point. */
static void say_full(void)
{
	static const char msg[] = "memtrace: more than 256 allocators named "
				  "through memtrace.h; the others are not "
				  "traced\n";
	int saved = errno;

	if (!atomic_exchange(&warned_full, 1) &&
	    mt_real_syscall6(SYS_write, STDERR_FILENO, (long)msg, sizeof(msg) - 1, 0, 0, 0) < 0)
		(void)0; /* nowhere to say it */
	errno = saved;
}

uint32_t mt_api_allocator(const char *name)
{
	size_t len;
	uint32_t id = 0, n;

	if (!name)
		return 0;
	len = strnlen(name, MT_API_NAME_MAX);
	mt_trace_lock();
	n = atomic_load_explicit(&count, memory_order_relaxed);
	for (uint32_t i = 1; i <= n && !id; i++)
		if (table[i].len == len && !memcmp(table[i].name, name, len))
			id = i;
	if (!id && n < MT_API_MAX_ALLOCATORS) {
		id = n + 1;
		memcpy(table[id].name, name, len);
		table[id].name[len] = '\0';
		table[id].len = len;
		atomic_store_explicit(&table[id].declared, 0, memory_order_relaxed);
		atomic_store_explicit(&count, id, memory_order_release);
	}
	if (id)
		declare_locked(id);
	mt_trace_unlock();
	if (!id)
		say_full();
	return id;
}

void mt_api_alloc(uint32_t id, const void *ptr, size_t size,
		  const uint64_t *ips, int n)
{
	int saved = errno;

	if (ptr && usable(id))
		mt_trace_api_event(MT_KIND_ALLOC, id, (uint64_t)ptr, 0, size,
				   ips, n);
	errno = saved;
}

void mt_api_free(uint32_t id, const void *ptr)
{
	int saved = errno;

	if (ptr && usable(id))
		mt_trace_api_event(MT_KIND_FREE, id, (uint64_t)ptr, 0, 0, NULL, 0);
	errno = saved;
}

void mt_api_realloc(uint32_t id, const void *old_ptr, const void *new_ptr,
		    size_t size, const uint64_t *ips, int n)
{
	if (!old_ptr) {
		mt_api_alloc(id, new_ptr, size, ips, n);
		return;
	}
	if (!new_ptr) {
		if (!size)
			mt_api_free(id, old_ptr);
		return;
	}
	int saved = errno;

	if (usable(id))
		mt_trace_api_event(old_ptr == new_ptr ? MT_KIND_RESIZE : MT_KIND_REMAP,
				   id, (uint64_t)old_ptr, (uint64_t)new_ptr, size,
				   ips, n);
	errno = saved;
}
