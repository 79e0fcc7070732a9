/*
 * wl_cxx_free: a C++ program that frees everything it allocates (new and
 * delete, a vector, a string, a thrown and caught exception), so that
 * only libstdc++'s own runtime memory (its 72,704-byte exception
 * emergency pool) could be left live.  With "_exit" it ends with
 * _exit(0) instead of returning from main.
 */
#include <cstring>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

__attribute__((noinline)) static int thrower(int i)
{
	if (i % 2)
		throw std::runtime_error("a message long enough to be on the heap");
	return i;
}

int main(int argc, char **argv)
{
	int caught = 0;

	for (int i = 0; i < 10; i++) {
		int *a = new int[25];
		a[0] = i;
		delete[] a;
	}
	{
		std::vector<long> v;
		std::string s;

		for (long i = 0; i < 1000; i++) {
			v.push_back(i);
			s += 'x';
		}
	}
	for (int i = 0; i < 4; i++) {
		try {
			thrower(i);
		} catch (const std::exception &e) {
			caught += e.what()[0] == 'a';
		}
	}
	if (write(1, "cxx done\n", 9) != 9 || caught != 2)
		return 1;
	if (argc > 1 && !std::strcmp(argv[1], "_exit"))
		_exit(0);
	return 0;
}
