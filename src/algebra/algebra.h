// Shared helpers of the graph algebra: every construction checks its inputs
// the same way, agrees on failure across ranks, and hands back a new SF.
#pragma once

#include <cstddef>
#include <vector>

#include "core/options.h"
#include "sf/sf.h"

namespace stf {

// stf_node travels as STF_MPI_NODE (MPI_2INT: {int rank; stf_int index} with stf_int == int).
static_assert(sizeof(stf_node) == 2 * sizeof(int) && offsetof(stf_node, index) == sizeof(int),
              "STF_MPI_NODE must describe stf_node");
constexpr stf_node kNoNode = {-1, -1};

// Slots a leaf buffer of sf needs (maxleaf + 1; 0 without leaves).
inline stf_int leaf_space(stf_sf sf) { return sf->maxleaf + 1; }

// Non-NULL SF with a graph (local check).
int check_input(stf_sf sf, const char *what);
// a and b live on congruent communicators (each SF holds its own duplicate,
// so identical is impossible; congruent means the same group and order).
int check_same_comm(stf_sf a, stf_sf b, const char *what);

// Local checks of the handles (out non-NULL, set to NULL; inputs with a
// graph), done before anything collective.
int check_one(stf_sf sf, stf_sf *out, const char *what);
int check_pair(stf_sf a, stf_sf b, stf_sf *out, const char *what);

// Collective: set an input SF up if it is not, its root offsets checked on
// every rank whatever -stf_validate says, so that a bad graph fails
// everywhere (the algebra's errors are agreed) instead of on its owner.
int set_up(stf_sf sf);

// Collective: a new SF on comm with the given options and graph (copied).
int new_sf(MPI_Comm comm, const Options &opts, stf_int nroots, stf_int nleaves, const stf_int *ilocal,
           const stf_node *iremote, stf_sf *out);

// Collective: a new SF on like's communicator and options with nroots roots
// whose leaves are the slots s of `at` holding a node (at[s] = kNoNode marks
// a slot without an edge), in ascending slot order.
int sf_from_slots(stf_sf like, stf_int nroots, const std::vector<stf_node> &at, stf_sf *out);

// Degree of every root of sf must be <= 1; collective (agrees on the verdict).
int check_degree_at_most_one(stf_sf sf, const char *what, const char *which);

// Owners of global indices in the layout where rank p owns the contiguous
// range [start[p], start[p+1]) (start has size+1 entries). STF_ERR_ARG for an
// index outside [0, start[size]). Local.
int find_owners(const std::vector<long long> &start, stf_int n, const stf_gint *global, stf_node *owners,
                const char *what);
// Collective: start[p] of the layout in which this rank owns nlocal entries
// (the total may exceed stf_int: global indices are stf_gint).
int layout_starts(MPI_Comm comm, stf_int nlocal, std::vector<long long> *start);

}  // namespace stf
