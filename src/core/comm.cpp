#include "core/comm.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <new>
#include <vector>

#include "core/error.h"

namespace stf {
namespace {

// One private duplicate and what is known about it.
struct Private {
  MPI_Comm dup = MPI_COMM_NULL;
  // Whose attribute points here; NULL once that attribute is gone (set by
  // its delete callback, which may run in another thread, without `mutex`).
  std::atomic<MPI_Comm> user{MPI_COMM_NULL};
  int users = 0;  // SFs holding a tag block
  long long next_tag = 0;
  long long tag_ub = 32767;  // the least MPI promises
  bool full() const { return next_tag + kTagsPerSf - 1 > tag_ub; }
};

// The records and the attributes that point at them. Never held across a
// collective (MPI_Comm_dup, MPI_Comm_free): a thread waiting inside one for
// its peers would block the threads of other communicators that those peers
// need. No two threads make collective calls on one communicator at once
// (MPI could not order them), so nobody else adds or frees a duplicate of
// the same communicator meanwhile.
std::mutex mutex;
int user_keyval = MPI_KEYVAL_INVALID;  // on a user's communicator: its Private
int self_keyval = MPI_KEYVAL_INVALID;  // on a duplicate: its own Private
int finalize_keyval = MPI_KEYVAL_INVALID;  // on MPI_COMM_SELF: frees what is left at MPI_Finalize
// Every Private, in creation order (the same on every rank of one).
std::vector<Private *> all;

// The user freed its communicator (or MPI is finalising), or a full Private
// was replaced: the duplicate lives on while SFs use it, and is freed by
// the next comm_acquire or comm_release once it has none (take_orphans),
// not here, inside the free of another communicator.
int user_attribute_gone(MPI_Comm, int, void *value, void *) {
  static_cast<Private *>(value)->user = MPI_COMM_NULL;
  return MPI_SUCCESS;
}

int attribute(MPI_Comm c, int keyval, Private **out) {
  void *v = nullptr;
  int flag = 0;
  STF_MPI(MPI_Comm_get_attr(c, keyval, &v, &flag));
  *out = flag ? static_cast<Private *>(v) : nullptr;
  return STF_SUCCESS;
}

// Under `mutex`: take p out of the attributes and the list, to be freed.
void forget(Private *p) {
  if (MPI_Comm user = p->user; user != MPI_COMM_NULL) {
    Private *current = nullptr;
    attribute(user, user_keyval, &current);
    if (current == p) MPI_Comm_delete_attr(user, user_keyval);  // sets p->user to NULL
  }
  MPI_Comm_delete_attr(p->dup, self_keyval);
  all.erase(std::find(all.begin(), all.end(), p));
}

// Without `mutex` (MPI_Comm_free is collective).
void free_all(const std::vector<Private *> &ps) {
  for (Private *p : ps) {
    MPI_Comm_free(&p->dup);
    delete p;
  }
}

// Under `mutex`: the Privates no SF uses for which keep(p) is false, taken
// out, to be freed with free_all.
template <class Keep>
std::vector<Private *> take_unused(Keep keep) {
  std::vector<Private *> out;
  for (Private *p : all)
    if (p->users == 0 && !keep(*p)) out.push_back(p);
  for (Private *p : out) forget(p);
  return out;
}

// Under `mutex`: the unused Privates whose user's communicator is gone. The
// ranks of one may free it at different calls (each at its next SF created
// or destroyed, on any communicator): MPI_Comm_free is collective, but
// neither Open MPI nor MPICH waits in it for the other ranks.
std::vector<Private *> take_orphans() {
  return take_unused([](const Private &p) { return p.user != MPI_COMM_NULL; });
}

// The same, or none where their list cannot be allocated: they stay until a
// later call (take_unused forgets nothing before its list is complete).
std::vector<Private *> take_orphans_if_memory() {
  try {
    return take_orphans();
  } catch (const std::bad_alloc &) {
    return {};
  }
}

// MPI_Finalize deletes MPI_COMM_SELF's attributes first, while MPI still
// works: the duplicates no SF uses go then (those of SFs never destroyed
// are left to MPI, as their SFs are).
int finalizing(MPI_Comm, int, void *, void *) {
  // SimGrid's SMPI runs this after marking MPI finalized, when no MPI call
  // works any more: the duplicates are then left to it.
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return MPI_SUCCESS;
  std::vector<Private *> idle;
  {
    std::lock_guard<std::mutex> lock(mutex);
    idle = take_unused([](const Private &) { return false; });
  }
  free_all(idle);
  return MPI_SUCCESS;
}

int keyvals() {
  if (user_keyval == MPI_KEYVAL_INVALID)
    STF_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, user_attribute_gone, &user_keyval, nullptr));
  if (self_keyval == MPI_KEYVAL_INVALID)
    STF_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &self_keyval, nullptr));
  if (finalize_keyval == MPI_KEYVAL_INVALID) {
    STF_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalizing, &finalize_keyval, nullptr));
    STF_MPI(MPI_Comm_set_attr(MPI_COMM_SELF, finalize_keyval, nullptr));
  }
  return STF_SUCCESS;
}

// Under `mutex`: the attributes that find p from its duplicate and, when c
// is a user's communicator, from c. Throws (out of memory) before setting any.
void set_attributes(Private *p, MPI_Comm c, bool of_user) {
  all.push_back(p);
  MPI_Comm_set_attr(p->dup, self_keyval, p);
  if (of_user) {
    p->user = c;
    MPI_Comm_set_attr(c, user_keyval, p);  // a previous, full one is told by user_attribute_gone
  }
}

// A new duplicate of c, findable (set_attributes), made by every rank or by
// none: a rank whose MPI_Comm_dup failed, or that cannot record the
// duplicate (out of memory), still takes part, and then all agree, on c.
// Collective, so called without `mutex`. *out comes held (users 1), so that
// another thread's take_orphans cannot free it meanwhile.
int duplicate(MPI_Comm c, bool of_user, Private **out) {
  MPI_Comm dup = MPI_COMM_NULL;
  Private *p = nullptr;
  Private *previous = nullptr;  // c's full one, which p replaces; c's again if the ranks fail
  const int mpi_rc = MPI_Comm_dup(c, &dup);
  int rc = STF_SUCCESS;
  if (mpi_rc != MPI_SUCCESS) {
    dup = MPI_COMM_NULL;
    rc = mpi_error(mpi_rc, "MPI_Comm_dup");
  } else {
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);  // MPI failures become error codes
    try {
      p = new Private;
      p->dup = dup;
      p->users = 1;
      void *ub = nullptr;
      int flag = 0;
      MPI_Comm_get_attr(dup, MPI_TAG_UB, &ub, &flag);
      if (flag) p->tag_ub = *static_cast<int *>(ub);
      std::lock_guard<std::mutex> lock(mutex);
      if (of_user) attribute(c, user_keyval, &previous);
      set_attributes(p, c, of_user);
      if (previous) previous->users++;  // kept until the ranks agree (take_orphans)
    } catch (...) {
      delete p;
      p = nullptr;
      rc = exception_error();
    }
  }
  rc = agree(c, rc);
  if (rc) {
    if (p) {
      // As on a rank that failed before recording p: the next SF of c must
      // duplicate the same communicator on every rank.
      std::lock_guard<std::mutex> lock(mutex);
      forget(p);
      if (previous) {
        MPI_Comm_set_attr(c, user_keyval, previous);
        previous->user = c;
        previous->users--;
      }
    }
    delete p;
    if (dup != MPI_COMM_NULL) MPI_Comm_free(&dup);
    return rc;
  }
  if (previous) {
    std::lock_guard<std::mutex> lock(mutex);
    previous->users--;  // an orphan now, for the caller's take_orphans
  }
  *out = p;
  return STF_SUCCESS;
}

// Under `mutex`: a fresh block of tags of p for one more SF.
void take_tags(Private *p, Comm *out) {
  out->comm = p->dup;
  out->tag_base = static_cast<int>(p->next_tag);
  p->next_tag += kTagsPerSf;
  p->users++;
  MPI_Comm_rank(p->dup, &out->rank);
  MPI_Comm_size(p->dup, &out->size);
}

}  // namespace

int comm_acquire(MPI_Comm user, Comm *out) {
  int inter = 0;
  STF_MPI(MPI_Comm_test_inter(user, &inter));
  if (inter) return set_error(STF_ERR_ARG, "an SF needs an intracommunicator (got an intercommunicator)");
  bool on_user = false;
  {
    std::lock_guard<std::mutex> lock(mutex);
    STF_CHECK(keyvals());
    Private *p = nullptr;
    STF_CHECK(attribute(user, self_keyval, &p));  // one of ours, passed on by an SF
    on_user = p == nullptr;                       // user is a user's communicator
    const MPI_Comm owner = p ? p->user.load() : MPI_COMM_NULL;
    if (p && p->full() && owner != MPI_COMM_NULL) {  // start over from the user's communicator
      user = owner;
      on_user = true;
    }
    if (on_user) STF_CHECK(attribute(user, user_keyval, &p));
    if (p && !p->full()) {
      take_tags(p, out);
      return STF_SUCCESS;
    }
  }
  Private *fresh = nullptr;
  STF_CHECK(duplicate(user, on_user, &fresh));
  std::vector<Private *> orphans;  // a full one replaced here, or users' communicators freed
  {
    std::lock_guard<std::mutex> lock(mutex);
    fresh->users--;  // duplicate's hold, now this SF's (take_tags)
    take_tags(fresh, out);
    orphans = take_orphans_if_memory();
  }
  free_all(orphans);
  return STF_SUCCESS;
}

// The last SF of a duplicate leaves it, with the node topology and what
// else the layers cached on it, to the next SF on the same communicator: a
// program that creates and destroys its SFs one at a time would otherwise
// duplicate the communicator and find its topology again for each. It goes
// with the user's communicator (at the next comm_acquire or comm_release),
// or at MPI_Finalize.
void comm_release(Comm *c) {
  if (c->comm == MPI_COMM_NULL) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  std::vector<Private *> orphans;  // free below, outside the lock
  if (!finalized) {
    std::lock_guard<std::mutex> lock(mutex);
    Private *p = nullptr;
    if (attribute(c->comm, self_keyval, &p) == STF_SUCCESS && p) p->users--;
    orphans = take_orphans_if_memory();
  }
  free_all(orphans);
  c->comm = MPI_COMM_NULL;
}

namespace detail {

int attribute_keyval(int (*del)(MPI_Comm, int, void *, void *), int *keyval) {
  std::lock_guard<std::mutex> lock(mutex);
  if (*keyval == MPI_KEYVAL_INVALID) STF_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del, keyval, nullptr));
  return STF_SUCCESS;
}

int get_or_put(MPI_Comm c, int keyval, void *(*make)(), void **out) {
  int flag = 0;
  STF_MPI(MPI_Comm_get_attr(c, keyval, out, &flag));
  if (flag) return STF_SUCCESS;
  *out = make();
  STF_MPI(MPI_Comm_set_attr(c, keyval, *out));
  return STF_SUCCESS;
}

}  // namespace detail

int agree(MPI_Comm comm, int rc, const int *names) {
  struct {
    int code, rank;
  } mine = {rc, 0}, worst;
  MPI_Comm_rank(comm, &mine.rank);
  STF_MPI(MPI_Allreduce(&mine, &worst, 1, MPI_2INT, MPI_MAXLOC, comm));
  if (rc != STF_SUCCESS) return rc;
  if (worst.code != STF_SUCCESS)
    return set_error(worst.code, "rank %d failed (its message says why)", names ? names[worst.rank] : worst.rank);
  return STF_SUCCESS;
}

int agree_max(MPI_Comm comm, int rc, int *values, int n) {
  constexpr int kMost = 8;
  if (n < 0 || n > kMost) return set_error(STF_ERR_INTERNAL, "agree_max: %d values, at most %d", n, kMost);
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int all[kMost + 2];  // the values, the largest code, size - the lowest rank that failed
  std::copy(values, values + n, all);
  all[n] = rc;
  all[n + 1] = rc ? size - rank : 0;
  STF_MPI(MPI_Allreduce(MPI_IN_PLACE, all, n + 2, MPI_INT, MPI_MAX, comm));
  std::copy(all, all + n, values);
  if (rc != STF_SUCCESS) return rc;
  if (all[n] != STF_SUCCESS) return set_error(all[n], "rank %d failed (its message says why)", size - all[n + 1]);
  return STF_SUCCESS;
}

}  // namespace stf
