// Does not compile on purpose: clangd reports the missing semicolon and offers a fix-it.
int missing_semicolon()
{
    int value = 1
    return value;
}
