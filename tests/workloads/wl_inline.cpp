/*
 * wl_inline: an allocation made inside an inlined function.
 * app::dup_line() is always inlined into main, so the return address of
 * its malloc call is in main; only DWARF's inlined_subroutine says the
 * call is dup_line's, and where main called it.  Two copies, one kept
 * (live at exit).  The pprof export must show the location as two lines:
 * app::dup_line(char const*) at the malloc line, inlined into main at the
 * call's line.
 */
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace app {

__attribute__((always_inline)) inline char *dup_line(const char *s)
{
	size_t n = strlen(s) + 1;
	char *copy = static_cast<char *>(malloc(n)); /* WL_INLINE_MALLOC */

	if (copy)
		memcpy(copy, s, n);
	return copy;
}

} // namespace app

int main()
{
	char *first = app::dup_line("first line"); /* WL_INLINE_CALL */
	char *kept;

	free(first);
	kept = app::dup_line("kept line");
	if (write(1, "inline done\n", 12) != 12)
		return 1;
	return kept && kept[0] == 'k' ? 0 : 1;
}
