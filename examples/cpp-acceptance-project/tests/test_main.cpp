// Test driver for CTest and for running a test executable directly.
//
//   (no arguments)        checks fixture::add and exits with 0
//   --expected-failure    exits with 1 (registered with WILL_FAIL)
//   --fail                exits with 1
//   --timeout             sleeps for 5 seconds, then exits with 0
//   --skip                exits with 77 (registered with SKIP_RETURN_CODE 77: CTest reports it skipped)
//   --echo-args A B ...   prints each following argument on its own line as <A>, so spaces and
//                         empty arguments are visible, then exits with 0
#include "fixture/math.hpp"

#include <chrono>
#include <iostream>
#include <string_view>
#include <thread>

int main(int argc, char** argv)
{
    if (argc < 2) {
        if (fixture::add(2, 3) != 5) {
            std::cerr << "fixture::add(2, 3) did not return 5\n";
            return 1;
        }
        std::cout << "fixture::add passed\n";
        return 0;
    }

    const std::string_view mode = argv[1];
    if (mode == "--expected-failure" || mode == "--fail") {
        std::cerr << "failing on purpose (" << mode << ")\n";
        return 1;
    }
    if (mode == "--skip") {
        std::cout << "skipping on purpose\n";
        return 77;
    }
    if (mode == "--timeout") {
        std::cout << "sleeping for 5 seconds\n" << std::flush;
        std::this_thread::sleep_for(std::chrono::seconds(5));
        return 0;
    }
    if (mode == "--echo-args") {
        for (int index = 2; index < argc; ++index) {
            std::cout << '<' << argv[index] << ">\n";
        }
        return 0;
    }

    std::cerr << "unknown option: " << mode << '\n';
    return 2;
}
