/*
 * mt_say: one line on stderr, "memtrace: ..." (mt_say.h).  It must never
 * call stdio or malloc: stdio could allocate or lock, and write() is a
 * cancellation point, so the line goes through the raw system call.
 */
#include "mt_say.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mt_real.h"

void mt_say_line(const char *a, const char *b, const char *c)
{
	const char *parts[] = { "memtrace: ", a, b, c };
	char msg[MT_SAY_MAX];
	size_t n = 0;

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		const char *p = parts[i] ? parts[i] : "";
		size_t k = strlen(p);

		if (k > sizeof(msg) - 1 - n)
			k = sizeof(msg) - 1 - n;
		memcpy(msg + n, p, k);
		n += k;
	}
	msg[n++] = '\n';
	for (const char *p = msg; n;) {
		long w = mt_real_syscall6(SYS_write, STDERR_FILENO, (long)p, (long)n,
					  0, 0, 0);

		if (w == -EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}
