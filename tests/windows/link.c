/* The smoke suite's link maker: `link.exe <new directory> <absolute target directory>` makes a
 * directory junction (a mount-point reparse point). Exit 0 when the new directory is a reparse
 * point, 3 when the file system does not support reparse points (Wine 8), 1 on other errors.
 * Built with mingw-w64 by tests/windows/smoke.sh. */
#include <windows.h>
#include <winioctl.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

typedef struct {
    DWORD ReparseTag;
    WORD ReparseDataLength;
    WORD Reserved;
    WORD SubstituteNameOffset;
    WORD SubstituteNameLength;
    WORD PrintNameOffset;
    WORD PrintNameLength;
    WCHAR PathBuffer[1];
} MountPoint;

int wmain(int argc, wchar_t **argv) {
    if (argc != 3) {
        fputs("usage: link.exe <new directory> <absolute target directory>\n", stderr);
        return 1;
    }
    if (!CreateDirectoryW(argv[1], NULL)) {
        fprintf(stderr, "CreateDirectoryW: %lu\n", GetLastError());
        return 1;
    }
    HANDLE dir = CreateFileW(argv[1], GENERIC_WRITE, 0, NULL, OPEN_EXISTING,
                             FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, NULL);
    if (dir == INVALID_HANDLE_VALUE) {
        fprintf(stderr, "CreateFileW: %lu\n", GetLastError());
        return 1;
    }
    wchar_t substitute[2048];
    swprintf(substitute, 2048, L"\\??\\%ls", argv[2]);
    size_t sub_bytes = wcslen(substitute) * sizeof(wchar_t), print_bytes = wcslen(argv[2]) * sizeof(wchar_t);
    static char buffer[MAXIMUM_REPARSE_DATA_BUFFER_SIZE];
    MountPoint *point = (MountPoint *)buffer;
    point->ReparseTag = IO_REPARSE_TAG_MOUNT_POINT;
    point->SubstituteNameLength = (WORD)sub_bytes;
    point->PrintNameOffset = (WORD)(sub_bytes + sizeof(wchar_t));
    point->PrintNameLength = (WORD)print_bytes;
    memcpy(point->PathBuffer, substitute, sub_bytes);
    memcpy((char *)point->PathBuffer + point->PrintNameOffset, argv[2], print_bytes);
    point->ReparseDataLength = (WORD)(4 * sizeof(WORD) + sub_bytes + print_bytes + 2 * sizeof(wchar_t));
    DWORD returned;
    BOOL done = DeviceIoControl(dir, FSCTL_SET_REPARSE_POINT, buffer, point->ReparseDataLength + 8, NULL, 0,
                                &returned, NULL);
    DWORD error = GetLastError();
    CloseHandle(dir);
    if (!done) {
        RemoveDirectoryW(argv[1]);
        fprintf(stderr, "FSCTL_SET_REPARSE_POINT: %lu\n", error);
        return error == ERROR_NOT_SUPPORTED || error == ERROR_INVALID_FUNCTION ? 3 : 1;
    }
    DWORD attributes = GetFileAttributesW(argv[1]);
    return attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_REPARSE_POINT) ? 0 : 1;
}
