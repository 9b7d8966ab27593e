/* The smoke suite's test executable: prints one JSON line with its argv[0], its other arguments
 * (as CommandLineToArgvW splits the command line), the raw command line and its current directory
 * to stdout and, when FORGEMCP_SMOKE_RECORD names a file, to that file too (the fake browser of
 * --open-admin has no stdout). Built with mingw-w64 by tests/windows/smoke.sh. */
#include <windows.h>
#include <shellapi.h>
#include <stdio.h>

static void put_json_string(FILE *out, const wchar_t *text) {
    char utf8[8192];
    int n = WideCharToMultiByte(CP_UTF8, 0, text, -1, utf8, (int)sizeof utf8, NULL, NULL);
    if (n <= 0) {
        utf8[0] = 0;
    }
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)utf8; *p; p++) {
        if (*p == '"' || *p == '\\') {
            fprintf(out, "\\%c", *p);
        } else if (*p < 0x20) {
            fprintf(out, "\\u%04x", *p);
        } else {
            fputc(*p, out);
        }
    }
    fputc('"', out);
}

static void report(FILE *out, int argc, wchar_t **argv, const wchar_t *line) {
    fputs("{\"argv0\": ", out);
    put_json_string(out, argv[0]);
    fputs(", \"args\": [", out);
    for (int i = 1; i < argc; i++) {
        if (i > 1) {
            fputs(", ", out);
        }
        put_json_string(out, argv[i]);
    }
    fputs("], \"command_line\": ", out);
    put_json_string(out, line);
    wchar_t cwd[MAX_PATH];
    fputs(", \"cwd\": ", out);
    put_json_string(out, GetCurrentDirectoryW(MAX_PATH, cwd) > 0 ? cwd : L"");
    fputs("}\n", out);
    fflush(out);
}

int main(void) {
    const wchar_t *line = GetCommandLineW();
    int argc = 0;
    wchar_t **argv = CommandLineToArgvW(line, &argc);
    if (argv == NULL || argc < 1) {
        return 2;
    }
    report(stdout, argc, argv, line);
    wchar_t record[MAX_PATH];
    if (GetEnvironmentVariableW(L"FORGEMCP_SMOKE_RECORD", record, MAX_PATH) > 0) {
        FILE *file = _wfopen(record, L"ab");
        if (file == NULL) {
            return 3;
        }
        report(file, argc, argv, line);
        fclose(file);
    }
    return 0;
}
