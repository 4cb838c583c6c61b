#ifndef GATEPASS_CSPAWN_SHIM_H
#define GATEPASS_CSPAWN_SHIM_H
#include <spawn.h>

// glibc (2.34+) declares this only with _GNU_SOURCE, which would change other system types
// under Swift's feet (fd_set's field names): declare it as glibc's spawn.h does.
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int lowest);

/// Makes the spawned program close every descriptor from `lowest` up (it keeps only what
/// the other file actions set up), so nothing of the parent leaks into it.
static inline int gatepass_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
}
#endif
