// Programs that crash or hang on purpose, for the post-mortem tests (tests/it/postmortem.rs).
#include <sys/resource.h>

#include <cassert>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>

static int read_value(int *ptr) {
  int seen = 21;
  seen += *ptr; // @null
  return seen;
}

static int checked(int x) {
  assert(x > 0); // @assert
  return x;
}

static std::mutex first_mutex;
static std::mutex second_mutex;

static void lock_first_then_second() {
  std::lock_guard<std::mutex> first(first_mutex);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::lock_guard<std::mutex> second(second_mutex); // @thread_a
}

static void lock_second_then_first() {
  std::lock_guard<std::mutex> second(second_mutex);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::lock_guard<std::mutex> first(first_mutex); // @thread_b
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (std::strcmp(mode, "null") == 0) {
    return read_value(nullptr);
  }
  if (std::strcmp(mode, "assert") == 0) {
    return checked(argc - 2);
  }
  if (std::strcmp(mode, "deadlock") == 0) {
    std::thread a(lock_first_then_second);
    std::thread b(lock_second_then_first);
    a.join();
    b.join();
    return 0;
  }
  if (std::strcmp(mode, "first") == 0) {
    // Crashes only when the marker file does not exist yet, and writes no core file.
    const char *marker = std::getenv("PM_MARKER");
    if (marker == nullptr) {
      return 2;
    }
    if (std::ifstream(marker).good()) {
      return 0;
    }
    std::ofstream(marker) << "ran\n";
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    return read_value(nullptr);
  }
  std::puts("usage: postmortem_cases null|assert|deadlock|first");
  return 2;
}
