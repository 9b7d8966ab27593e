/* The smoke suite's process tree: `tree.exe spawn <file>` starts `tree.exe beat <file>` and waits
 * forever; `beat` rewrites <file> with a growing counter every 50 ms. A timeout that kills the whole
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
        for (unsigned long count = 1;; count++) {
            FILE *file = _wfopen(argv[2], L"wb");
            if (file != NULL) {
                fprintf(file, "%lu\n", count);
                fclose(file);
            }
            Sleep(50);
        }
    }
    fputs("usage: tree.exe spawn|beat <file>\n", stderr);
    return 2;
}
