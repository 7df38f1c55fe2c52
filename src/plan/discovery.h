// Two-sided discovery: each rank knows whose roots its leaves point to; find
// out which ranks point to my roots and which root offsets they want.
#pragma once

#include "core/comm.h"
#include "core/options.h"
#include "plan/messages.h"

namespace stf {

// Collective. `wanted` lists, per root-owning rank (never this rank), the
// root offsets this rank's leaves point to. Returns, per leaf-owning rank,
// the offsets it asked for, in the order it listed them. Messages carry the
// SF's discovery tag (or `tag` of its block): other SFs on the communicator
// may be discovering too. NBX keeps memory O(neighbours); allreduce needs
// O(communicator size). A rank that runs out of memory takes part to the
// end and then fails: the others fail too where it could not take part at
// all (allreduce's array), and otherwise learn it at the caller's agreement.
int discover(const Comm &comm, TwoSided algo, const Messages &wanted, Messages *asked, Tag tag = Tag::discovery);
// The same where every rank knows how many ranks ask it (`expected`): no
// collective, only the messages. `sends` has room for a request per message
// of wanted, allocated before the caller's agreement that every rank is
// ready (one that could not send would leave its peers waiting). A rank that
// runs out of memory receives every message all the same, then fails.
int exchange_known(const Comm &comm, int expected, const Messages &wanted, MPI_Request *sends, Messages *asked,
                   Tag tag);

}  // namespace stf
