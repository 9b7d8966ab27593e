#include "fixture/math.hpp"

namespace fixture {

int add(int lhs, int rhs)
{
    return lhs + rhs;
}

int increment(int value)
{
    return add(value, 1);
}

} // namespace fixture
