//! Failing inner cases of test frameworks (issue 30 §4) with real programs built in the test
//! against Debian's GoogleTest, Catch2 and doctest packages: one CTest test per program and one per
//! case (`gtest_discover_tests`), each failing case with its `project/…` path, line and whole
//! message, and passing cases' lines left out first when the output is long (CI or
//! `FORGEMCP_HEAVY_TESTS=1`).

use std::time::Duration;

use forgemcp::server::ForgeServer;
use serde_json::{Value, json};

use crate::support::{TempWorkspace, TestClient, call, connect, real_services, structured, text};

const LISTS: &str = r#"cmake_minimum_required(VERSION 3.16)
project(frameworks CXX)
enable_testing()
find_package(GTest REQUIRED)
find_package(Catch2 REQUIRED)
find_package(doctest REQUIRED)
add_executable(gt tests/gt.cpp)
target_link_libraries(gt GTest::gtest_main)
add_test(NAME gt COMMAND gt)
include(GoogleTest)
gtest_discover_tests(gt TEST_PREFIX "each.")
add_executable(ca tests/ca.cpp)
target_link_libraries(ca Catch2::Catch2)
add_test(NAME ca COMMAND ca)
add_executable(dt tests/dt.cpp)
target_link_libraries(dt doctest::doctest)
add_test(NAME dt COMMAND dt)
"#;

/// 400 passing cases with a log line each (about 40 KiB of output) and two failing ones.
const GT: &str = r#"#include <gtest/gtest.h>
#include <iostream>
TEST(ParseTest, Ok) { EXPECT_EQ(1, 1); }
TEST(ParseTest, Empty) {
  int a = 1, b = 2;
  EXPECT_EQ(a, b);
}
class ErrorCases : public ::testing::TestWithParam<int> {};
TEST_P(ErrorCases, Works) { std::cout << "checking the error path of value " << GetParam() << "\n"; }
INSTANTIATE_TEST_SUITE_P(Many, ErrorCases, ::testing::Range(0, 400));
TEST(Other, Str) { EXPECT_EQ(std::string("abc\ndef"), std::string("abc\nxyz")); }
"#;

const CA: &str = r#"#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
TEST_CASE("adds numbers") { REQUIRE(1 + 1 == 2); }
TEST_CASE("parses empty") {
  int a = 1;
  CHECK(a == 2);
}
"#;

const DT: &str = r#"#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
TEST_CASE("adds") { CHECK(1 + 1 == 2); }
TEST_CASE("parses empty") {
  int a = 1;
  REQUIRE(a == 3);
}
"#;

fn test_named<'a>(tests: &'a [Value], name: &str) -> &'a Value {
    tests.iter().find(|t| t["name"] == name).unwrap_or_else(|| panic!("no test `{name}` in {tests:#?}"))
}

#[track_caller]
fn assert_contains(haystack: &str, needle: &str) {
    assert!(haystack.contains(needle), "`{needle}` not in:\n{haystack}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_cases_come_with_their_path_line_and_whole_message() {
    if !crate::support::real_tools(
        "failing_cases_come_with_their_path_line_and_whole_message",
        &["cmake", "ctest", "ninja", "g++"],
    ) {
        return;
    }
    let ws = TempWorkspace::new("");
    for (path, body) in [("CMakeLists.txt", LISTS), ("tests/gt.cpp", GT), ("tests/ca.cpp", CA), ("tests/dt.cpp", DT)] {
        ws.write(path, body);
    }
    let client = connect(ForgeServer::new(real_services(&ws, &[]), Duration::ZERO), TestClient::new()).await;
    let res = call(&client, "cmake_configure", json!({ "profiles": ["Debug"] })).await;
    assert!(structured(&res)["result"][0]["error"].is_null(), "{}", text(&res));
    let res = call(&client, "cmake_build", json!({ "profiles": ["Debug"] })).await;
    assert!(structured(&res)["result"][0]["error"].is_null(), "{}", text(&res));
    let res = call(&client, "cmake_test", json!({ "profiles": ["Debug"], "parallel": 2 })).await;
    let shown = text(&res);
    let tests = structured(&res)["result"][0]["tests"].as_array().expect("tests").clone();

    // One CTest test per program: both failing cases, in order, with path, line and message.
    let gt = test_named(&tests, "gt");
    let failures = gt["failures"].as_array().expect("failures");
    assert_eq!(failures.len(), 2, "{failures:#?}");
    assert_eq!(failures[0]["case"], "ParseTest.Empty");
    assert_eq!(failures[0]["path"], "project/tests/gt.cpp");
    assert_eq!(failures[0]["line"], 6);
    assert_eq!(
        failures[0]["message"],
        "Expected equality of these values:\n  a\n    Which is: 1\n  b\n    Which is: 2"
    );
    assert_eq!(failures[1]["case"], "Other.Str");
    assert_contains(failures[1]["message"].as_str().unwrap(), "+xyz");
    assert_contains(shown, "project/tests/gt.cpp:6: failure: ParseTest.Empty: Expected equality of these values:");
    // The 400 passing cases' lines went first; the failing blocks stayed whole.
    let message = gt["message"].as_str().expect("a message");
    assert_contains(message, "lines of 400 passing cases left out");
    assert_contains(message, "    Which is: \"abc\\nxyz\"\nWith diff:\n@@ -1,2 +1,2 @@\n abc\n-def\n+xyz");
    assert!(!message.contains("checking the error path"), "{message}");

    // One CTest test per case.
    let each = test_named(&tests, "each.ParseTest.Empty");
    assert_eq!(each["failures"][0]["case"], "ParseTest.Empty");
    assert_eq!(each["failures"][0]["line"], 6);
    assert_eq!(test_named(&tests, "each.ParseTest.Ok")["failures"], json!([]));

    let ca = test_named(&tests, "ca");
    assert_eq!(ca["failures"].as_array().map(Vec::len), Some(1), "{ca:#?}");
    assert_eq!(ca["failures"][0]["case"], "parses empty");
    assert_eq!(ca["failures"][0]["path"], "project/tests/ca.cpp");
    assert_eq!(ca["failures"][0]["line"], 6);
    assert_eq!(ca["failures"][0]["message"], "  CHECK( a == 2 )\nwith expansion:\n  1 == 2");
    assert_contains(shown, "project/tests/ca.cpp:6: failure: parses empty: CHECK( a == 2 )");

    let dt = test_named(&tests, "dt");
    assert_eq!(dt["failures"][0]["case"], "parses empty");
    assert_eq!(dt["failures"][0]["path"], "project/tests/dt.cpp");
    assert_eq!(dt["failures"][0]["line"], 6);
    assert_contains(shown, "project/tests/dt.cpp:6: failure: parses empty: REQUIRE( a == 3 ) is NOT correct!");
    client.cancel().await.expect("shut down");
}
