// Collective transports for SFs with a collective pattern: one nonblocking
// MPI collective on the user's arrays (self part included) instead of one
// message per peer.
//
// Patterns are recognised at set-up from the graph itself (one allgather of
// root counts and an allreduce of the verdicts), so SFs from
// stf_create_from_pattern and user-built SFs of the same shape both qualify:
//   allgather: every rank's leaf slot start[p] + k reads root k of rank p
//              (start = prefix sums of the root counts), leaves 0..n-1;
//   gather:    the same on rank 0, no leaves elsewhere;
//   alltoall:  every rank has n = size * b roots and leaves, leaf slot
//              p * b + k reads root me * b + k of rank p.
// What moves where:
//   bcast MPI_REPLACE: MPI_Iallgatherv / Iallgather, Igatherv / Igather to
//     rank 0, Ialltoall, with the unit datatype on the user's arrays;
//   reduce MPI_REPLACE: the reverse collective where each root has one leaf:
//     Iscatterv / Iscatter from rank 0 (gather), Ialltoall (alltoall);
//   everything else (other ops, which need a combine step; reduce on the
//   allgather pattern, where every root has a leaf on every rank;
//   fetch-and-op): basic, through the fallback wrapper (the registry gives
//   these rows no message path), which describe() (stf_view) names. An SF
//   without the requested pattern falls back to basic entirely, also named
//   in the view, so one option can be set for a whole program whose SFs
//   differ. The collectives run on the communicator every SF of the user's
//   communicator shares, so operations of such SFs must be begun in the same
//   order on every rank.
// -stf_type allgather / gather need equal root counts on every rank (else
// the SF falls back); "collective" takes the best collective that applies.
#include <algorithm>
#include <climits>

#include "core/error.h"
#include "transport/registry.h"

namespace stf {
namespace {

enum class Shape { none, allgather, gather, alltoall };

struct CollectiveChannel : ChannelState {
  MPI_Request req = MPI_REQUEST_NULL;
};

// My part of each shape's test (the verdicts are then agreed by all ranks).
struct Verdict {
  int allgather = 1, gather = 1, alltoall = 1;
};

bool all_roots_in_rank_order(const Graph &g, const std::vector<stf_int> &start) {
  const stf_int total = start.back();
  if (g.nleaves != total) return false;
  int p = 0;
  for (stf_int i = 0; i < total; i++) {
    while (start[p + 1] <= i) p++;
    if (g.leaf_at(i) != i || g.iremote[i].rank != p || g.iremote[i].index != i - start[p]) return false;
  }
  return true;
}

Verdict judge(const Comm &comm, const Graph &g, const std::vector<int> &counts, const std::vector<stf_int> &start) {
  Verdict v;
  const bool everything = all_roots_in_rank_order(g, start);
  v.allgather = everything;
  v.gather = comm.rank == 0 ? everything : g.nleaves == 0;
  const stf_int n = counts[0];
  for (stf_int c : counts) v.alltoall &= c == n;
  v.alltoall &= n % comm.size == 0 && g.nleaves == n;
  const stf_int b = v.alltoall ? n / comm.size : 0;
  for (stf_int i = 0; v.alltoall && i < n; i++) {
    const stf_int slot = g.leaf_at(i);
    if (slot < 0 || slot >= n) {
      v.alltoall = 0;
      break;
    }
    const int p = static_cast<int>(slot / b);
    v.alltoall = g.iremote[i].rank == p && g.iremote[i].index == comm.rank * b + slot % b;
  }
  return v;
}

class CollectiveTransport : public TransportDefaults {
 public:
  explicit CollectiveTransport(const TransportContext &ctx)
      : comm_(ctx.comm.comm), me_(ctx.comm.rank), requested_(ctx.opts.type) {}

  // The arrays init fills, before its collectives (prepare_agreed).
  void prepare(const Comm &comm) {
    counts_.assign(comm.size, 0);
    displs_.assign(comm.size, 0);
    start_.assign(comm.size + 1, 0);
  }

  // Collective: recognise the pattern and pick the collective.
  int init(const Comm &comm, const Graph &g) {
    STF_MPI(MPI_Allgather(&g.nroots, 1, MPI_INT, counts_.data(), 1, MPI_INT, comm_));
    long long total = 0;
    for (int p = 0; p < comm.size; p++) {
      total += counts_[p];
      if (total > INT_MAX) return STF_SUCCESS;  // too big to be a pattern of stf_int slots: fall back
      start_[p + 1] = static_cast<stf_int>(total);
    }
    std::copy(start_.begin(), start_.end() - 1, displs_.begin());
    Verdict v = judge(comm, g, counts_, start_);
    int flags[3] = {v.allgather, v.gather, v.alltoall};
    STF_MPI(MPI_Allreduce(MPI_IN_PLACE, flags, 3, MPI_INT, MPI_MIN, comm_));
    bool equal = true;
    for (stf_int c : counts_) equal &= c == counts_[0];
    const std::string &r = requested_;
    if (total == 0) return STF_SUCCESS;  // nothing ever moves
    if (flags[0] && (r == "collective" || r == "allgatherv" || (r == "allgather" && equal)))
      shape_ = Shape::allgather, uniform_ = equal && r != "allgatherv";
    else if (flags[2] && (r == "collective" || r == "alltoall"))
      shape_ = Shape::alltoall, uniform_ = true;
    else if (flags[1] && (r == "collective" || r == "gatherv" || (r == "gather" && equal)))
      shape_ = Shape::gather, uniform_ = equal && r != "gatherv";
    return STF_SUCCESS;
  }

  const char *name() const override { return requested_.c_str(); }
  std::string describe() const override {
    const char *all = "; bcast of other ops, reduce and fetch-and-op: basic fallback)";
    switch (shape_) {
      case Shape::none:
        return requested_ + " (the SF has no " + wanted_pattern() +
               " pattern this transport can serve: basic fallback for everything)";
      case Shape::allgather:
        return requested_ + " (" + (uniform_ ? "MPI_Iallgather" : "MPI_Iallgatherv") +
               " of the user's arrays for bcast REPLACE" + all;
      case Shape::gather:
        return requested_ + " (" + (uniform_ ? "MPI_Igather" : "MPI_Igatherv") +
               " to rank 0 for bcast REPLACE, the reverse " + (uniform_ ? "MPI_Iscatter" : "MPI_Iscatterv") +
               " for reduce REPLACE; other ops and fetch-and-op: basic fallback)";
      case Shape::alltoall:
        return requested_ +
               " (MPI_Ialltoall of the user's arrays for bcast and reduce REPLACE; other ops and fetch-and-op: "
               "basic fallback)";
    }
    return requested_;
  }

  // Messages go through basic (the registry says this transport has no message path).
  int post_recv(Channel &, Direction, Leg, std::size_t, void *const *) override { return no_messages(); }
  int post_send(Channel &, Direction, Leg, std::size_t, const void *const *) override { return no_messages(); }
  int wait_recv(Channel &) override { return no_messages(); }
  int wait_send(Channel &) override { return no_messages(); }
  // Only whole operations get here: the collective is the receive and the send.
  int test_recv(Channel &c, bool *done) override {
    int flag = 0;
    STF_MPI(MPI_Test(&c.get<CollectiveChannel>().req, &flag, MPI_STATUS_IGNORE));
    *done = flag != 0;
    return STF_SUCCESS;
  }
  int test_send(Channel &, bool *done) override {
    *done = true;
    return STF_SUCCESS;
  }

  bool takes_whole(Direction d, const Unit &, MPI_Op op) const override {
    if (shape_ == Shape::none || op != MPI_REPLACE) return false;
    return d == Direction::root_to_leaf || shape_ != Shape::allgather;
  }
  bool whole_does_self() const override { return true; }

  int begin_whole(Channel &c, Direction d, const WholeOp &w) override {
    MPI_Request *req = &c.get<CollectiveChannel>().req;
    const MPI_Datatype t = w.unit.type;
    const int n = counts_[me_];
    void *dst = w.dst;
    const void *src = w.src;
    if (shape_ == Shape::alltoall) {  // its own reverse
      const int b = n / static_cast<int>(counts_.size());
      STF_MPI(MPI_Ialltoall(src, b, t, dst, b, t, comm_, req));
    } else if (d == Direction::root_to_leaf) {
      switch (shape_) {
        case Shape::allgather:
          if (uniform_) STF_MPI(MPI_Iallgather(src, n, t, dst, n, t, comm_, req));
          else STF_MPI(MPI_Iallgatherv(src, n, t, dst, counts_.data(), displs_.data(), t, comm_, req));
          break;
        case Shape::gather:
          if (uniform_) STF_MPI(MPI_Igather(src, n, t, dst, n, t, 0, comm_, req));
          else STF_MPI(MPI_Igatherv(src, n, t, dst, counts_.data(), displs_.data(), t, 0, comm_, req));
          break;
        default: return set_error(STF_ERR_INTERNAL, "collective transport without a pattern");
      }
    } else {
      switch (shape_) {
        case Shape::gather:
          if (uniform_) STF_MPI(MPI_Iscatter(src, n, t, dst, n, t, 0, comm_, req));
          else STF_MPI(MPI_Iscatterv(src, counts_.data(), displs_.data(), t, dst, n, t, 0, comm_, req));
          break;
        default: return set_error(STF_ERR_INTERNAL, "collective transport: no reverse collective");
      }
    }
    return STF_SUCCESS;
  }

  int end_whole(Channel &c, Direction) override {
    STF_MPI(MPI_Wait(&c.get<CollectiveChannel>().req, MPI_STATUS_IGNORE));
    return STF_SUCCESS;
  }

 private:
  static int no_messages() { return set_error(STF_ERR_INTERNAL, "collective transport: messages go through basic"); }

  std::string wanted_pattern() const {
    if (requested_ == "collective") return "allgather, gather or alltoall";
    if (requested_ == "allgather" || requested_ == "gather") return requested_ + " (equal root counts)";
    if (requested_ == "allgatherv") return "allgather";
    if (requested_ == "gatherv") return "gather";
    return requested_;
  }

  MPI_Comm comm_;
  int me_;
  std::string requested_;
  std::vector<int> counts_, displs_;  // root counts and their prefix sums, per rank
  std::vector<stf_int> start_;        // the prefix sums and the total (init)
  Shape shape_ = Shape::none;
  bool uniform_ = false;  // the non-v collective (equal counts)
};

}  // namespace

int make_collective_transport(const TransportContext &ctx, std::unique_ptr<Transport> *out) {
  std::unique_ptr<CollectiveTransport> c;
  STF_CHECK(prepare_agreed(ctx, [&] {
    c = std::make_unique<CollectiveTransport>(ctx);
    c->prepare(ctx.comm);
  }));
  STF_CHECK(c->init(ctx.comm, ctx.graph));
  *out = std::move(c);
  return STF_SUCCESS;
}

}  // namespace stf
