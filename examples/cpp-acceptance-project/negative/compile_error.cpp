// Does not compile on purpose: the identifier below is never declared.
int main()
{
    return fixture_undeclared_value;
}
