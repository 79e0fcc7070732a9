/*
 * wl_stl: an -O2 -g C++ program as users write them, whose allocations
 * all come from the STL inlined into its own functions: a std::map of
 * std::string to std::vector.  Its sites must be named by its own lines
 * (WL_STL_*), not by operator new or the containers' internals.
 */
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace app {

__attribute__((noinline)) std::map<std::string, std::vector<int>> build(int n)
{
	std::map<std::string, std::vector<int>> words;

	for (int i = 0; i < n; i++) {
		std::string key = "a fairly long key, past the small buffer " +
				  std::to_string(i % 7); /* WL_STL_KEY */
		words[key].push_back(i); /* WL_STL_PUSH */
	}
	return words;
}

__attribute__((noinline)) std::vector<std::string> names(int n)
{
	std::vector<std::string> out;

	for (int i = 0; i < n; i++)
		out.emplace_back(40 + i % 3, 'x'); /* WL_STL_NAMES */
	return out;
}

} // namespace app

int main()
{
	auto words = app::build(200);
	auto more = app::names(50);
	std::size_t total = 0;

	for (const auto &w : words)
		total += w.second.size();
	std::printf("%zu %zu\n", total, more.size());
	return 0;
}
