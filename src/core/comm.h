// Communicator economy. MPI libraries have a few thousand communicator ids
// (MPICH 2048 per process, Open MPI 4.1 about 65,000), and codes keep
// thousands of SFs alive, so an SF does not duplicate the user's
// communicator. Every SF on a user communicator shares one private
// duplicate of it, cached on the user's communicator as an MPI attribute and
// counted by the SFs using it, and each SF gets a block of tags of its own
// on it: messages of different SFs never match. The last SF leaves it (and
// the node topology found on it) to the next SF on that communicator; it
// goes with the user's communicator, or at MPI_Finalize.
// SFs made from an SF (algebra results, multi-SFs, duplicates) pass the
// private duplicate, which is recognised and shared as well.
//
// Tags are handed out in creation order, which is the same on every rank
// (stf_create is collective), from a counter that never goes back, so every
// rank gives an SF the same block. When a duplicate's tags run out (MPI_TAG_UB
// / kTagsPerSf SFs: about a million with MPICH 4.0's 2^28 - 1, 8 million
// with Open MPI 4.1's 2^31 - 1), the next SF gets a new duplicate.
#pragma once

#include "starforest.h"

namespace stf {

// The tags of one SF, as offsets in its block.
enum class Tag : int {
  root_to_leaf,  // bcast messages (and fetch-and-op contributions' reverse)
  leaf_to_root,  // reduce messages, fetch-and-op contributions
  fetch_return,  // fetch-and-op old values, sent from end
  discovery,     // set-up
  subplan,       // deriving a sub-SF's plan from its parent's
  node_request,  // node-aware set-up: a node's leader names the receivers of another node's chunks
  node_reply,    //   and that node's leader tells each receiver its chunk's sender
  steps,         //   and the requests of its steps' plans, all at once
  transport,     // first of kTransportTags tags a transport may use as it likes
};
// The most a transport uses: putsignal's, 6 at set-up and a tag per
// direction and operation number modulo twice its slots (at most 64).
constexpr int kTransportTags = 262;
constexpr int kTagsPerSf = static_cast<int>(Tag::transport) + kTransportTags;

// An SF's view of its communicator.
struct Comm {
  MPI_Comm comm = MPI_COMM_NULL;  // the shared private duplicate (errors return, never abort)
  int rank = 0, size = 1;
  int tag_base = 0;
  int tag(Tag t) const { return tag_base + static_cast<int>(t); }
  int transport_tag(int k) const { return tag(Tag::transport) + k; }
};

// Collective over user (as stf_create is): the shared duplicate of user and a
// fresh block of tags. STF_ERR_ARG for an intercommunicator. Where it makes
// the duplicate (the first SF of a communicator, or its tags ran out), every
// rank fails if one does (out of memory), after all took part.
int comm_acquire(MPI_Comm user, Comm *out);
// Collective over comm: every rank learns whether any rank failed. A rank
// that failed keeps its own code and message; the others return the largest
// failing code with a message naming the (lowest) rank that failed with it,
// as names[its rank in comm] where given (comm a part of the SF's).
// Called before any step that would hang if some ranks had already returned.
int agree(MPI_Comm comm, int rc, const int *names = nullptr);
// agree, and in the same allreduce every rank learns the largest of each of
// values[0 .. n) (n <= 8) over the ranks, in place. The message names the
// lowest rank that failed, whatever its code.
int agree_max(MPI_Comm comm, int rc, int *values, int n);
// Give back what comm_acquire gave. Collective (duplicates whose user's
// communicator is gone may be freed).
void comm_release(Comm *c);

// An object of type T cached on communicator c: made on first use, deleted
// when c is freed. Upper layers keep their per-communicator state this way
// (the transport layer its graph communicators, the ops layer the order of
// deferred sends).
template <class T>
int cached_on(MPI_Comm c, T **out);

namespace detail {
int attribute_keyval(int (*del)(MPI_Comm, int, void *, void *), int *keyval);
int get_or_put(MPI_Comm c, int keyval, void *(*make)(), void **out);
template <class T>
int delete_cached(MPI_Comm, int, void *value, void *) {
  delete static_cast<T *>(value);
  return MPI_SUCCESS;
}
template <class T>
void *make_cached() {
  return new T();
}
}  // namespace detail

template <class T>
int cached_on(MPI_Comm c, T **out) {
  static int keyval = MPI_KEYVAL_INVALID;
  int rc = detail::attribute_keyval(&detail::delete_cached<T>, &keyval);
  if (rc) return rc;
  void *v = nullptr;
  rc = detail::get_or_put(c, keyval, &detail::make_cached<T>, &v);
  *out = static_cast<T *>(v);
  return rc;
}

}  // namespace stf
