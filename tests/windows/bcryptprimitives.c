/* A stand-in for bcryptprimitives.dll under Wine 8, which lacks it. Rust's standard library imports
 * ProcessPrng from it for random numbers (HashMap seeds, temporary names); this forwards to
 * RtlGenRandom (advapi32's SystemFunction036), which Wine has. Only the smoke suite builds it, and
 * only for a private Wine prefix; real Windows has the genuine DLL. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) {
            return FALSE;
        }
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved) {
    (void)instance;
    (void)reason;
    (void)reserved;
    return TRUE;
}
