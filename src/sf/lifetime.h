// Where SF objects are made and unmade. Their memory is never handed back to
// the allocator: a destroyed SF's shell is marked dead and kept, and shells
// are reused oldest first only once more than sf_quarantine of them wait.
// A handle kept past stf_destroy therefore still points at readable memory
// that says "destroyed", and check_sf turns its use into STF_ERR_STATE
// instead of a use-after-free, until its shell is reused (after at least
// sf_quarantine further SFs have been destroyed); from then on it names the
// new SF, which nothing cheap can tell apart.
#pragma once

#include <cstddef>

#include "sf/sf.h"

namespace stf {
constexpr std::size_t sf_quarantine = 64;

// A new SF object in a fresh or reused shell; nullptr when out of memory.
stf_sf make_sf_object();
// Runs the destructor and marks the shell dead.
void unmake_sf_object(stf_sf sf);
// False for a destroyed SF (its shell not reused yet).
bool sf_object_alive(stf_sf sf);
}  // namespace stf
