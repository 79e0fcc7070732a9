/*
 * wl_manyfns: 4096 distinct functions, each making one allocation, so the
 * preload names thousands of new frames in one module with far more
 * function symbols than preload/mt_symbol.c indexes at: those frames are
 * named through the module's sorted index, and must be named as the walk
 * over every symbol names them.  Afterwards it prints each function's
 * name and address ("f_abc 0x55..."), so the test knows which function
 * holds each frame.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define F(x, y, z) \
	static __attribute__((noinline)) void *f_##x##y##z(void) \
	{ \
		return malloc(0x##x##y##z + 1); \
	}
#define F16(x, y) F(x, y, 0) F(x, y, 1) F(x, y, 2) F(x, y, 3) F(x, y, 4) F(x, y, 5) \
	F(x, y, 6) F(x, y, 7) F(x, y, 8) F(x, y, 9) F(x, y, a) F(x, y, b) F(x, y, c) \
	F(x, y, d) F(x, y, e) F(x, y, f)
#define F256(x) F16(x, 0) F16(x, 1) F16(x, 2) F16(x, 3) F16(x, 4) F16(x, 5) F16(x, 6) \
	F16(x, 7) F16(x, 8) F16(x, 9) F16(x, a) F16(x, b) F16(x, c) F16(x, d) F16(x, e) \
	F16(x, f)
F256(0) F256(1) F256(2) F256(3) F256(4) F256(5) F256(6) F256(7)
F256(8) F256(9) F256(a) F256(b) F256(c) F256(d) F256(e) F256(f)

#define P(x, y, z) { "f_" #x #y #z, f_##x##y##z },
#define P16(x, y) P(x, y, 0) P(x, y, 1) P(x, y, 2) P(x, y, 3) P(x, y, 4) P(x, y, 5) \
	P(x, y, 6) P(x, y, 7) P(x, y, 8) P(x, y, 9) P(x, y, a) P(x, y, b) P(x, y, c) \
	P(x, y, d) P(x, y, e) P(x, y, f)
#define P256(x) P16(x, 0) P16(x, 1) P16(x, 2) P16(x, 3) P16(x, 4) P16(x, 5) P16(x, 6) \
	P16(x, 7) P16(x, 8) P16(x, 9) P16(x, a) P16(x, b) P16(x, c) P16(x, d) P16(x, e) \
	P16(x, f)

static const struct {
	const char *name;
	void *(*fn)(void);
} fns[] = {
	P256(0) P256(1) P256(2) P256(3) P256(4) P256(5) P256(6) P256(7)
	P256(8) P256(9) P256(a) P256(b) P256(c) P256(d) P256(e) P256(f)
};

int main(void)
{
	size_t n = sizeof(fns) / sizeof(fns[0]);

	for (size_t i = 0; i < n; i++)
		free(fns[i].fn());
	for (size_t i = 0; i < n; i++)
		printf("%s %#jx\n", fns[i].name, (uintmax_t)(uintptr_t)fns[i].fn);
	return 0;
}
