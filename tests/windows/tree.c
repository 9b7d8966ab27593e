/* The smoke suite's process tree: `tree.exe spawn <file>` starts `tree.exe beat <file>` and waits
 * forever; `beat` appends one byte to <file> every 50 ms, so the size counts the beats (a rewrite
 * truncates first, and a kill landing there read as "never ran"). A timeout that kills the whole
 * tree (the job object) stops the counter; one that only killed the leader would leave it growing.
 * `tree.exe breakaway <file>` does the same but asks for CREATE_BREAKAWAY_FROM_JOB, which a job
 * without JOB_OBJECT_LIMIT_BREAKAWAY_OK refuses; it prints whether the child started.
 * Built with mingw-w64 by tests/windows/smoke.sh. */
#include <windows.h>
#include <stdio.h>
#include <wchar.h>

int wmain(int argc, wchar_t **argv) {
    int breakaway = argc == 3 && wcscmp(argv[1], L"breakaway") == 0;
    if (argc == 3 && (breakaway || wcscmp(argv[1], L"spawn") == 0)) {
        wchar_t self[MAX_PATH];
        wchar_t command[3 * MAX_PATH];
        GetModuleFileNameW(NULL, self, MAX_PATH);
        swprintf(command, sizeof command / sizeof command[0], L"\"%ls\" beat \"%ls\"", self, argv[2]);
        STARTUPINFOW startup = {.cb = sizeof startup};
        PROCESS_INFORMATION info;
        DWORD flags = breakaway ? CREATE_BREAKAWAY_FROM_JOB : 0;
        if (!CreateProcessW(self, command, NULL, NULL, FALSE, flags, NULL, NULL, &startup, &info)) {
            printf("refused %lu\n", GetLastError());
            fflush(stdout);
            Sleep(INFINITE);
        }
        printf("spawned %lu\n", info.dwProcessId);
        fflush(stdout);
        Sleep(INFINITE);
        return 0;
    }
    if (argc == 3 && wcscmp(argv[1], L"beat") == 0) {
        for (;;) {
            FILE *file = _wfopen(argv[2], L"ab");
            if (file != NULL) {
                fputc('.', file);
                fclose(file);
            }
            Sleep(50);
        }
    }
    fputs("usage: tree.exe spawn|beat <file>\n", stderr);
    return 2;
}
