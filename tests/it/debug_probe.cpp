// The debug tests' program (tests/it/debug.rs): locals (each set before the lines the tests stop
// at, so no stop shows a stack's leftovers), nested calls to step through, a null-pointer
// crash with `crash`, and a long sleep with `sleep`. Markers `@name` name the lines the tests use.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

struct Point {
    int x;
    int y;
};

static int square(int v) {
    return v * v; // @square
}

// `a` and `b` are parameters, not locals, so that a stop on entry shows no stack leftovers.
int add_squares(Point p, int a = 0, int b = 0) {
    a = square(p.x); // @add_first
    b = square(p.y); // @add_second
    return a + b;
}

int read_through(const int *ptr) {
    return *ptr; // @crash
}

int main(int argc, char **argv) {
    Point origin{3, 4};
    const char *label = "probe";
    int total = 0;
    total = add_squares(origin); // @break
    std::printf("%s %d\n", label, total);
    std::fflush(stdout);
    if (argc > 1 && std::strcmp(argv[1], "crash") == 0) {
        const int *missing = nullptr;
        total += read_through(missing);
    }
    if (argc > 1 && std::strcmp(argv[1], "sleep") == 0) {
        std::this_thread::sleep_for(std::chrono::seconds(60));
    }
    return total == 25 ? 0 : 1; // @exit
}
