// Compiles but does not link on purpose: the function is declared and never defined.
int fixture_undefined_function(int value);

int main()
{
    return fixture_undefined_function(1);
}
