/*
 * wl_cxx: C++ new and delete reach malloc through libstdc++ and must show
 * up.  Sizes mark the calls: new int[25] (100 bytes) x10 deleted,
 * new Leak (7000 bytes) from leak_here() kept, and a static object whose
 * destructor frees its 9999-byte buffer at exit, which must be recorded
 * before trace.stop.
 */
#include <cstdio>
#include <cstring>
#include <unistd.h>
#include <vector>

struct Leak {
	char bytes[7000];
};

struct AtExit {
	char *buf;
	AtExit() : buf(new char[9999]) {}
	~AtExit() { delete[] buf; }
};

static AtExit at_exit_object;

__attribute__((noinline)) Leak *leak_here()
{
	Leak *l = new Leak;
	std::memset(l->bytes, 1, sizeof(l->bytes));
	return l;
}

int main()
{
	for (int i = 0; i < 10; i++) {
		int *a = new int[25];
		a[0] = i;
		delete[] a;
	}
	std::vector<long> v;
	for (long i = 0; i < 1000; i++)
		v.push_back(i);
	leak_here();
	if (write(1, "cxx done\n", 9) != 9)
		return 1;
	return 0;
}
