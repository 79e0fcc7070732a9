/*
 * wl_unwind_throw: exceptions thrown and caught through frames that
 * allocate (the exception object itself is malloc'd), at changing depths,
 * 2000 times; a stack an unwinder must walk exactly while the unwinder of
 * the exception has just rewritten it.  Prints nothing; exits 0.
 */
#include <stdexcept>
#include <string>
#include <vector>

static volatile int sink;

__attribute__((noinline)) static void down(int depth, int throw_at)
{
	std::vector<int> v(8 + depth);
	std::string s(40 + depth, 'x');

	sink += v[0] + s[0];
	if (depth == throw_at)
		throw std::runtime_error(s);
	if (depth > 0)
		down(depth - 1, throw_at);
}

__attribute__((noinline)) static void catch_midway(int i)
{
	try {
		down(i % 11, i % 5);
	} catch (const std::runtime_error &e) {
		std::string copy(e.what());
		sink += copy[0];
	}
}

int main()
{
	for (int i = 0; i < 2000; i++)
		catch_midway(i);
	return 0;
}
