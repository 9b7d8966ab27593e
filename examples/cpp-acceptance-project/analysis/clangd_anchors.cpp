// Anchors for hover, definitions, references and workspace symbols. Listed in the compilation
// database through the fixture_analysis object library; never built by default.
#include "fixture/hierarchy.hpp"
#include "fixture/math.hpp"

namespace analysis {

// Callee of anchor_caller; also a call site of fixture::add.
int anchor_callee(int value)
{
    return fixture::add(value, 1);
}

// Caller of anchor_callee, with a second call site of fixture::add.
int anchor_caller()
{
    return anchor_callee(fixture::add(1, 2));
}

// Returns the derived type, so its definition and type hierarchy can be followed.
const fixture::Circle& anchor_circle()
{
    return fixture::default_circle();
}

} // namespace analysis
