#ifndef GATEPASS_CFUZZERDRIVER_H
#define GATEPASS_CFUZZERDRIVER_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's entry point for programs that have their own main (FuzzerInterface.h):
/// parses the libFuzzer options in argv and calls `callback` with each input.
/// Defined by clang's libclang_rt.fuzzer_no_main, which .ci/fuzz links.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
