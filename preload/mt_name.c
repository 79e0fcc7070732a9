/*
 * mt_name: trace names from the MEMTRACE_OUTPUT pattern (mt_name.h).  It
 * must never allocate, call into libc beyond the string functions, or cut
 * a name that does not fit: a cut name could be another process's.
 */
#include "mt_name.h"

#include <stdint.h>
#include <string.h>

#include "../common/mt_fmt.h"

int mt_name_expand(const char *pattern, pid_t pid, char *out, size_t cap)
{
	size_t n = 0;

	for (const char *s = pattern; *s; s++) {
		char num[MT_FMT_U64_MAX];
		const char *add = s;
		size_t len = 1;

		if (s[0] == '%' && s[1] == 'p') {
			len = mt_fmt_u64(num, (uint64_t)pid);
			add = num;
			s++;
		} else if (s[0] == '%' && s[1] == '%') {
			s++;
		}
		if (n + len >= cap)
			return -1;
		memcpy(out + n, add, len);
		n += len;
	}
	out[n] = '\0';
	return 0;
}

int mt_name_has_pid(const char *pattern)
{
	for (const char *s = pattern; *s; s++) {
		if (s[0] != '%')
			continue;
		if (s[1] == 'p')
			return 1;
		if (s[1] == '%')
			s++;
	}
	return 0;
}

int mt_name_insert_before_ext(const char *name, const char *ins, char *out,
			      size_t cap)
{
	const char *slash = strrchr(name, '/');
	const char *base = slash ? slash + 1 : name;
	const char *dot = strrchr(base, '.');
	size_t blen = strlen(base);

	/* A compressed trace's two extensions stay together:
	 * out.jsonl.zst -> out.%p.jsonl.zst. */
	if (blen > 10 && !strcmp(base + blen - 10, ".jsonl.zst"))
		dot = base + blen - 10;
	size_t n = strlen(name), k = strlen(ins), at;

	if (n + k + 1 > cap)
		return -1;
	at = dot && dot != base ? (size_t)(dot - name) : n;
	memmove(out, name, at);
	memcpy(out + at, ins, k);
	memcpy(out + at + k, name + at, n - at + 1);
	return 0;
}

int mt_name_child_pattern(const char *pattern, char *out, size_t cap)
{
	if (mt_name_has_pid(pattern)) {
		if (strlen(pattern) + 1 > cap)
			return -1;
		memcpy(out, pattern, strlen(pattern) + 1);
		return 0;
	}
	return mt_name_insert_before_ext(pattern, ".%p", out, cap);
}
