// Exits with 0 when the library and the root header agree.
#include "fixture/hierarchy.hpp"
#include "fixture/math.hpp"
#include "shared.hpp"

int main()
{
    const bool sum_matches = fixture::add(40, 2) == fixture::shared_expected_sum;
    const bool name_matches = fixture::default_circle().name() == "circle";
    return sum_matches && name_matches ? 0 : 1;
}
