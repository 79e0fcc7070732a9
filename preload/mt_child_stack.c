/*
 * mt_child_stack: stacks for the preload's CLONE_VM children
 * (mt_child_stack.h says why the unmap is more than munmap).  It must
 * never call malloc or a hooked function.
 */
#include "mt_child_stack.h"

#include <sys/mman.h>
#include <sys/syscall.h>

#include "mt_real.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

long mt_child_stack_map(size_t len)
{
	return mt_real_syscall6(SYS_mmap, 0, (long)len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
}

void mt_child_stack_unmap(long stack, size_t len)
{
#if defined(__SANITIZE_ADDRESS__)
	__asan_unpoison_memory_region((void *)stack, len);
#endif
	mt_real_syscall6(SYS_munmap, stack, (long)len, 0, 0, 0, 0);
}
