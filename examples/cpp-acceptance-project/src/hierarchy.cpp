#include "fixture/hierarchy.hpp"

namespace fixture {

std::string_view Shape::name() const
{
    return "shape";
}

std::string_view Circle::name() const
{
    return "circle";
}

const Circle& default_circle()
{
    static const Circle circle;
    return circle;
}

} // namespace fixture
