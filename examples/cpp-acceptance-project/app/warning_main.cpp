// Compiles with one warning: it calls the deprecated fixture::increment.
#include "fixture/math.hpp"

int main()
{
    return fixture::increment(41) == 42 ? 0 : 1;
}
