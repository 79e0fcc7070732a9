/*
 * mt_demangle: C++ names demangled with libstdc++'s __cxa_demangle (the
 * Itanium ABI's demangler, in libstdc++.so.6 on every Debian machine).
 * Its result is malloc()ed by libstdc++, so it is copied into mt_mem
 * memory and freed at once: memtrace's own allocations all go through
 * mt_mem.  It must never fail a command because a name cannot be
 * demangled: such a name is shown as the trace has it.
 */
#include "../model/mt_demangle.h"

#include <stdlib.h>
#include <string.h>

#include "../base/mt_error.h"
#include "../base/mt_mem.h"

/* libstdc++'s demangler (cxxabi.h is C++ only). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len,
			    int *status);

int mt_demangle_name(const char *name, char **out)
{
	char *plain;
	int status = 0;

	*out = NULL;
	/* Every mangled C++ name starts with _Z; anything else (C names,
	 * "main") costs two compares. */
	if (!name || name[0] != '_' || name[1] != 'Z')
		return MT_OK;
	plain = __cxa_demangle(name, NULL, NULL, &status);
	if (!plain || status != 0) {
		/* -1: libstdc++ ran out of memory; -2: not a name it
		 * knows. Either way the raw name is still right. */
		free(plain);
		return MT_OK;
	}
	*out = mt_mem_strndup(plain, strlen(plain));
	free(plain);
	return *out ? MT_OK : MT_ENOMEM;
}

int mt_demangle_add(mt_buf_t *b, const char *name)
{
	char *plain;
	int rc = mt_demangle_name(name, &plain);

	if (rc)
		return rc;
	rc = mt_buf_add_str(b, plain ? plain : name);
	mt_mem_free(plain);
	return rc;
}
