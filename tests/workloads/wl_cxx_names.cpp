/*
 * wl_cxx_names: a C++ frame for every naming rule a person reads.  Five
 * Widgets (64 bytes each) from app::make_widget(int), in namespace app,
 * through operator new; the last one kept, so it is live at exit.  The
 * report must show `app::make_widget(int)` and `operator new(unsigned
 * long)`, never their mangled names.
 */
#include <unistd.h>

namespace app {

struct Widget {
	long cells[8];
};

__attribute__((noinline)) Widget *make_widget(int n)
{
	Widget *w = new Widget;

	w->cells[0] = n;
	return w;
}

} // namespace app

int main()
{
	app::Widget *kept = nullptr;

	for (int i = 0; i < 5; i++) {
		delete kept;
		kept = app::make_widget(i);
	}
	if (write(1, "names done\n", 11) != 11)
		return 1;
	return kept->cells[0] == 4 ? 0 : 1;
}
