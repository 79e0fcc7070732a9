/*
 * mt_exe: the exe's path without a look under /proc/self where the
 * image's own exec name leads to it (mt_exe.h).  It must never name a
 * file other than the one /proc/self/exe would: whatever it cannot
 * confirm, it leaves to /proc/self/exe.
 */
#include "mt_exe.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>

#include "mt_elf.h"
#include "mt_nofd.h"
#include "mt_real.h"

/* The work space of a walk: what is left of the path, and a link read. */
#define WORK 1024
/* As the kernel's path walk (MAXSYMLINKS). */
#define MAX_LINKS 40

long mt_exe_resolve(const char *path, char *out, size_t cap)
{
	char rest[WORK], link[WORK];
	/* out[0..len) is canonical ("" for the root); rest[at..) is left. */
	size_t len = 0, at = 0;
	int links = 0;
	long n;

	if (cap < 2 || strlen(path) >= sizeof(rest))
		return -ENAMETOOLONG;
	strcpy(rest, path);
	if (path[0] != '/') {
		n = mt_real_syscall6(SYS_getcwd, (long)link, (long)sizeof(link), 0, 0, 0, 0);
		if (n < 0)
			return n;
		/* "(unreachable)...": the directory is outside our root. */
		if (link[0] != '/')
			return -ENOENT;
		len = strlen(link);
		if (len >= cap)
			return -ENAMETOOLONG;
		memcpy(out, link, len);
		if (len == 1)
			len = 0;
	}
	out[len] = '\0';
	for (;;) {
		size_t start, clen, left;

		while (rest[at] == '/')
			at++;
		if (!rest[at])
			break;
		start = at;
		while (rest[at] && rest[at] != '/')
			at++;
		clen = at - start;
		if (clen == 1 && rest[start] == '.')
			continue;
		if (clen == 2 && rest[start] == '.' && rest[start + 1] == '.') {
			/* out has no link left in it: its parent is its own. */
			while (len > 0 && out[len - 1] != '/')
				len--;
			if (len > 0)
				len--;
			out[len] = '\0';
			continue;
		}
		/* A walk through /proc would make the entries it is here to
		 * spare (a name under /dev/fd/ leads there). */
		if (!len && clen == 4 && !memcmp(rest + start, "proc", 4))
			return -EXDEV;
		if (len + 1 + clen + 1 > cap)
			return -ENAMETOOLONG;
		out[len] = '/';
		memcpy(out + len + 1, rest + start, clen);
		out[len + 1 + clen] = '\0';
		n = mt_real_syscall6(SYS_readlink, (long)out, (long)link, (long)sizeof(link), 0, 0,
				     0);
		if (n == -EINVAL) {
			len += 1 + clen;
			continue;
		}
		if (n < 0)
			return n;
		if ((size_t)n >= sizeof(link))
			return -ENAMETOOLONG;
		if (++links > MAX_LINKS)
			return -ELOOP;
		/* The link's target takes its place in what is left. */
		left = strlen(rest + at);
		if ((size_t)n + left + 1 > sizeof(rest))
			return -ENAMETOOLONG;
		memmove(rest + n, rest + at, left + 1);
		memcpy(rest, link, (size_t)n);
		at = 0;
		if (link[0] == '/')
			len = 0;
		out[len] = '\0';
	}
	if (!len) {
		out[0] = '/';
		out[1] = '\0';
		return 1;
	}
	return (long)len;
}

/* The main program's first bytes as mapped: its ELF header and program
 * headers, *span bytes; NULL when they cannot be found whole. */
static const unsigned char *image_head(size_t *span)
{
	const ElfW(Phdr) *ph;
	const ElfW(Ehdr) *eh = NULL;
	uintptr_t bias = 0;
	size_t n = 0;
	int have_bias = mt_elf_main_phdrs(&ph, &n, &bias) == 0;

	for (size_t i = 0; have_bias && !eh && i < n; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset == 0)
			eh = (const ElfW(Ehdr) *)(bias + ph[i].p_vaddr);
	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_phoff < sizeof(*eh))
		return NULL;
	*span = eh->e_phoff + (size_t)eh->e_phnum * eh->e_phentsize;
	return *span <= WORK ? (const unsigned char *)eh : NULL;
}

long mt_exe_from_exec_name(char *out, size_t cap)
{
	const char *name = (const char *)getauxval(AT_EXECFN);
	const unsigned char *mem;
	unsigned char head[WORK];
	size_t span;
	long n, got;

	/* No interpreter: ld.so was run as the program, and is the exe,
	 * while AT_EXECFN names the program it loaded. */
	if (!name || !getauxval(AT_BASE))
		return -ENOENT;
	mem = image_head(&span);
	if (!mem)
		return -ENOENT;
	/* fexecve() and execveat() name /dev/fd/N: the walk refuses it
	 * where it leads into /proc. */
	n = mt_exe_resolve(name, out, cap);
	if (n < 0)
		return n;
	got = mt_nofd_read(out, (char *)head, span);
	if (got != (long)span || memcmp(head, mem, span))
		return -ENOENT;
	return n;
}

long mt_exe_path(char *out, size_t cap, int may_open)
{
	long n;

	if (cap < 2)
		return -ENAMETOOLONG;
	if (may_open && mt_exe_from_exec_name(out, cap) > 0)
		return (long)strlen(out);
	n = mt_real_syscall6(SYS_readlink, (long)"/proc/self/exe", (long)out, (long)cap - 1, 0,
			     0, 0);
	if (n < 0)
		return n;
	out[n] = '\0';
	return n;
}
