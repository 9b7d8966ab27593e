//! Tests of the framework parsers on outputs recorded from real programs (GoogleTest 1.12.1,
//! Catch2 2.13.10 and doctest 2.4.9 from Debian 12), paths replaced by `/src/fw/`.

use expect_test::{Expect, expect};

use super::*;

/// `gt`: two passing-or-skipped cases, two failing ones (two assertions in one).
const GTEST: &str = r#"Running main() from ./googletest/src/gtest_main.cc
[==========] Running 4 tests from 2 test suites.
[----------] Global test environment set-up.
[----------] 2 tests from ParseTest
[ RUN      ] ParseTest.Ok
log from ok
[       OK ] ParseTest.Ok (0 ms)
[ RUN      ] ParseTest.Empty
some log line
/src/fw/gt.cpp:7: Failure
Expected equality of these values:
  a
    Which is: 1
  b
    Which is: 2
/src/fw/gt.cpp:8: Failure
Value of: a > 5
  Actual: false
Expected: true
extra message
[  FAILED  ] ParseTest.Empty (0 ms)
[----------] 2 tests from ParseTest (0 ms total)

[----------] 2 tests from Other
[ RUN      ] Other.Str
/src/fw/gt.cpp:10: Failure
Expected equality of these values:
  std::string("abc\ndef")
    Which is: "abc\ndef"
  std::string("abc\nxyz")
    Which is: "abc\nxyz"
With diff:
@@ -1,2 +1,2 @@
 abc
-def
+xyz

[  FAILED  ] Other.Str (0 ms)
[ RUN      ] Other.Skip
/src/fw/gt.cpp:11: Skipped
not today
[  SKIPPED ] Other.Skip (0 ms)
[----------] 2 tests from Other (0 ms total)

[----------] Global test environment tear-down
[==========] 4 tests from 2 test suites ran. (0 ms total)
[  PASSED  ] 1 test.
[  SKIPPED ] 1 test, listed below:
[  SKIPPED ] Other.Skip
[  FAILED  ] 2 tests, listed below:
[  FAILED  ] ParseTest.Empty
[  FAILED  ] Other.Str

 2 FAILED TESTS
"#;

/// `ca`: one passing case, a failing case with a section, a case that throws.
const CATCH2: &str = r#"
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
ca is a Catch v2.13.10 host application.
Run with -? for options

-------------------------------------------------------------------------------
parses empty
-------------------------------------------------------------------------------
/src/fw/ca.cpp:4
...............................................................................

/src/fw/ca.cpp:6: FAILED:
  CHECK( a == 2 )
with expansion:
  1 == 2

-------------------------------------------------------------------------------
parses empty
  inner section
-------------------------------------------------------------------------------
/src/fw/ca.cpp:7
...............................................................................

/src/fw/ca.cpp:7: FAILED:
  REQUIRE( a == 3 )
with expansion:
  1 == 3

-------------------------------------------------------------------------------
parses empty
-------------------------------------------------------------------------------
/src/fw/ca.cpp:4
...............................................................................

/src/fw/ca.cpp:6: FAILED:
  CHECK( a == 2 )
with expansion:
  1 == 2

-------------------------------------------------------------------------------
throws
-------------------------------------------------------------------------------
/src/fw/ca.cpp:9
...............................................................................

/src/fw/ca.cpp:9: FAILED:
due to unexpected exception with message:
  boom

===============================================================================
test cases: 3 | 1 passed | 2 failed
assertions: 5 | 1 passed | 4 failed

"#;

/// `dt`: the same three cases in doctest.
const DOCTEST: &str = r#"[doctest] doctest version is "2.4.9"
[doctest] run with "--help" for options
===============================================================================
/src/fw/dt.cpp:4:
TEST CASE:  parses empty

/src/fw/dt.cpp:6: ERROR: CHECK( a == 2 ) is NOT correct!
  values: CHECK( 1 == 2 )

===============================================================================
/src/fw/dt.cpp:4:
TEST CASE:  parses empty
  inner

/src/fw/dt.cpp:7: FATAL ERROR: REQUIRE( a == 3 ) is NOT correct!
  values: REQUIRE( 1 == 3 )

===============================================================================
/src/fw/dt.cpp:9:
TEST CASE:  throws

/src/fw/dt.cpp:9: ERROR: test case THREW exception: boom

===============================================================================
[doctest] test cases: 3 | 1 passed | 2 failed | 0 skipped
[doctest] assertions: 3 | 1 passed | 2 failed |
[doctest] Status: FAILURE!
"#;

#[track_caller]
fn check_failures(output: &str, expect: Expect) {
    let shown: Vec<String> = failures(output)
        .expect("a framework")
        .iter()
        .map(|f| format!("{} @ {:?}:{:?}\n{}", f.case, f.file, f.line, f.message))
        .collect();
    expect.assert_eq(&shown.join("\n--\n"));
}

fn cut(text: &str, budget: usize) -> String {
    format!("<{} bytes cut to {budget}>", text.len())
}

#[test]
fn detects_each_framework_and_nothing_else() {
    assert_eq!(detect(GTEST), Some(Framework::GoogleTest));
    assert_eq!(detect(CATCH2), Some(Framework::Catch2));
    assert_eq!(detect(DOCTEST), Some(Framework::Doctest));
    assert_eq!(detect("failing on purpose (--fail)\nexpected 1 == 2"), None);
    assert_eq!(failures("plain output"), None);
}

#[test]
fn googletest_failures() {
    check_failures(
        GTEST,
        expect![[r#"
            ParseTest.Empty @ Some("/src/fw/gt.cpp"):Some(7)
            Expected equality of these values:
              a
                Which is: 1
              b
                Which is: 2
            --
            ParseTest.Empty @ Some("/src/fw/gt.cpp"):Some(8)
            Value of: a > 5
              Actual: false
            Expected: true
            extra message
            --
            Other.Str @ Some("/src/fw/gt.cpp"):Some(10)
            Expected equality of these values:
              std::string("abc\ndef")
                Which is: "abc\ndef"
              std::string("abc\nxyz")
                Which is: "abc\nxyz"
            With diff:
            @@ -1,2 +1,2 @@
             abc
            -def
            +xyz"#]],
    );
}

#[test]
fn googletest_case_that_never_finished() {
    let output = "[==========] Running 2 tests from 1 test suite.\n[ RUN      ] Crash.Ok\n[       OK ] Crash.Ok (0 ms)\n\
                  [ RUN      ] Crash.Null\nabout to crash\n";
    check_failures(
        output,
        expect![[r#"
            Crash.Null @ None:None
            the case started and never finished (the program stopped inside it)"#]],
    );
}

#[test]
fn googletest_exception_and_msvc_locations() {
    let output = "[ RUN      ] T.Throws\nunknown file: Failure\nC++ exception with description \"boom\" thrown in the test body.\n\
                  [  FAILED  ] T.Throws (0 ms)\n[ RUN      ] T.Win\nC:\\src\\t.cpp(12): error: Value of: x\n  Actual: false\n\
                  [  FAILED  ] T.Win (1 ms)\n";
    check_failures(
        output,
        expect![[r#"
            T.Throws @ None:None
            C++ exception with description "boom" thrown in the test body.
            --
            T.Win @ Some("C:\\src\\t.cpp"):Some(12)
            Value of: x
              Actual: false"#]],
    );
}

#[test]
fn catch2_failures() {
    check_failures(
        CATCH2,
        expect![[r#"
            parses empty @ Some("/src/fw/ca.cpp"):Some(6)
              CHECK( a == 2 )
            with expansion:
              1 == 2
            --
            parses empty / inner section @ Some("/src/fw/ca.cpp"):Some(7)
              REQUIRE( a == 3 )
            with expansion:
              1 == 3
            --
            throws @ Some("/src/fw/ca.cpp"):Some(9)
            due to unexpected exception with message:
              boom"#]],
    );
}

#[test]
fn doctest_failures() {
    check_failures(
        DOCTEST,
        expect![[r#"
            parses empty @ Some("/src/fw/dt.cpp"):Some(6)
            CHECK( a == 2 ) is NOT correct!
              values: CHECK( 1 == 2 )
            --
            parses empty / inner @ Some("/src/fw/dt.cpp"):Some(7)
            REQUIRE( a == 3 ) is NOT correct!
              values: REQUIRE( 1 == 3 )
            --
            throws @ Some("/src/fw/dt.cpp"):Some(9)
            test case THREW exception: boom"#]],
    );
}

#[test]
fn output_within_the_budget_is_kept_whole() {
    assert_eq!(condense(GTEST, GTEST.len(), cut).as_deref(), Some(GTEST));
    assert_eq!(condense("no framework", 1, cut), None);
}

/// Passing cases go first: 300 passing cases around one failing one, in 4 KiB.
#[test]
fn passing_cases_go_first_and_failing_blocks_stay_whole() {
    let mut output = String::from("[==========] Running 301 tests from 1 test suite.\n");
    for n in 0..150 {
        output.push_str(&format!("[ RUN      ] Error.Pass{n}\nlog {n}\n[       OK ] Error.Pass{n} (0 ms)\n"));
    }
    output.push_str(
        "[ RUN      ] Error.Fails\n/src/y.cpp:3: Failure\nExpected equality of these values:\n  \"a\"\n  \"b\"\n",
    );
    output.push_str("[  FAILED  ] Error.Fails (0 ms)\n");
    for n in 150..300 {
        output.push_str(&format!("[ RUN      ] Error.Pass{n}\n[       OK ] Error.Pass{n} (0 ms)\n"));
    }
    output.push_str("[==========] 301 tests from 1 test suite ran. (5 ms total)\n[  FAILED  ] 1 test, listed below:\n");
    let condensed = condense(&output, 4096, cut).unwrap();
    expect![[r#"
        [==========] Running 301 tests from 1 test suite.
        … 450 lines of 150 passing cases left out
        [ RUN      ] Error.Fails
        /src/y.cpp:3: Failure
        Expected equality of these values:
          "a"
          "b"
        [  FAILED  ] Error.Fails (0 ms)
        … 300 lines of 150 passing cases left out
        [==========] 301 tests from 1 test suite ran. (5 ms total)
        [  FAILED  ] 1 test, listed below:"#]]
    .assert_eq(&condensed);
}

/// When the failing blocks and the rest do not fit, the lines outside cases are shortened first.
#[test]
fn lines_outside_cases_are_shortened_before_failing_blocks() {
    let mut output = String::from("[==========] Running 1 test from 1 test suite.\n");
    for n in 0..200 {
        output.push_str(&format!("global set-up line {n}\n"));
    }
    output.push_str("[ RUN      ] A.B\n/src/y.cpp:3: Failure\nValue of: ok\n[  FAILED  ] A.B (0 ms)\n");
    let condensed = condense(&output, 1024, cut).unwrap();
    expect![[r#"
        <4536 bytes cut to 948>
        [ RUN      ] A.B
        /src/y.cpp:3: Failure
        Value of: ok
        [  FAILED  ] A.B (0 ms)"#]]
    .assert_eq(&condensed);
}
