/*
 * wl_textdomain: a library whose constructor binds its message catalogue
 * before memtrace's constructor has run (libgpg-error's does, in ps):
 * bindtextdomain() allocates with gettext's lock held, so that allocation
 * starts the tracer under the lock.  Then it does what a program's main()
 * does, which takes the lock again: it must find the lock whole.
 */
#include <libintl.h>
#include <locale.h>
#include <stdio.h>

__attribute__((constructor)) static void wl_textdomain_start(void)
{
	bindtextdomain("memtrace-lib", "/nonexistent/locale");
	/* What a program's main() then does (ps's does). */
	setlocale(LC_ALL, "");
	bindtextdomain("memtrace-test", "/nonexistent/locale");
	if (!textdomain("memtrace-test"))
		perror("textdomain");
	(void)gettext("a message");
}
