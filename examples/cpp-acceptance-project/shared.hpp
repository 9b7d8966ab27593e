// A header at the project root, included only by the good app. It is an anchor for cross-file
// navigation and renames through a header that no test opens directly.
#pragma once

namespace fixture {

// The value the good app expects the library to compute.
inline constexpr int shared_expected_sum = 42;

} // namespace fixture
