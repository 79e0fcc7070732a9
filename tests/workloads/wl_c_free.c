/*
 * wl_c_free: a C program (no libstdc++) that frees everything it
 * allocates: 20 blocks of 300 bytes, one resized to 600, through
 * malloc, calloc and realloc.  Nothing else of its own is live at exit.
 */
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
	char *p[20];

	for (int i = 0; i < 20; i++)
		p[i] = i % 2 ? malloc(300) : calloc(1, 300);
	p[0] = realloc(p[0], 600);
	for (int i = 0; i < 20; i++)
		free(p[i]);
	return write(1, "c done\n", 7) != 7;
}
