// The graph of an SF as the user gave it, from the leaf side: how many roots
// this rank owns, and for each leaf its slot and the (rank, offset) of its
// root. Nothing here communicates.
#pragma once

#include "starforest.h"

namespace stf {

struct Graph {
  bool has_graph = false;
  stf_int nroots = 0, nleaves = 0;
  const stf_int *ilocal = nullptr;  // nullptr: leaves 0..nleaves-1
  const stf_node *iremote = nullptr;
  bool free_ilocal = false, free_iremote = false;
  stf_int minleaf = 0, maxleaf = -1;

  stf_int leaf_at(stf_int i) const { return ilocal ? ilocal[i] : i; }
};

// Local checks of a graph for a communicator of comm_size ranks; never reads
// past the arrays: counts >= 0, arrays present, ranks inside the
// communicator, offsets >= 0, leaf slots < INT_MAX (so that maxleaf + 1
// fits), no leaf slot twice.
int validate_graph(int comm_size, stf_int nroots, stf_int nleaves, const stf_int *ilocal, const stf_node *iremote);
// Take a validated graph (arrays copied, owned or borrowed by mode) into an
// empty g.
int set_graph(Graph *g, stf_int nroots, stf_int nleaves, const stf_int *ilocal, stf_copy_mode local_mode,
              const stf_node *iremote, stf_copy_mode remote_mode);
// Back to no graph, freeing what g owns.
void clear_graph(Graph *g);

}  // namespace stf
