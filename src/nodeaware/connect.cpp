// 3step and split between nodes (connect.h), without a discovery: both
// leaders of a node pair know the pair's keys (the reading node's from its
// ranks' requests, the source node's from its ranks' plans, which say which
// of their roots each other node reads) and cut them into chunks by the same
// rule (pair_chunks). The reading leader has already given each chunk a
// receiver; the source leader gives each a sender. Then each reading leader
// tells each source leader the receivers of its chunks, and each source
// leader tells each receiver its chunk's sender and offset, and each sender
// its chunks: messages whose senders and counts both sides know.
#include "nodeaware/connect.h"

#include <algorithm>
#include <array>
#include <numeric>

#include "core/comm.h"
#include "core/error.h"

namespace stf {
namespace nodeaware {
namespace {

// G's root side on a sender, from its leader's list [nchunks, (receiver,
// offset, count) per chunk, keys...]: per receiver (one chunk each, as a
// pair's chunks go to different ranks), the slots of its chunk here.
// *keys: where the list's keys start.
Messages sender_cross_root(const std::vector<stf_int> &list, std::size_t *keys) {
  const std::size_t nchunks = static_cast<std::size_t>(list.at(0));
  *keys = 1 + 3 * nchunks;
  std::vector<std::array<stf_int, 3>> chunks(nchunks);
  for (std::size_t c = 0; c < nchunks; c++)
    for (std::size_t j = 0; j < 3; j++) chunks[c][j] = list.at(1 + 3 * c + j);
  std::sort(chunks.begin(), chunks.end());
  Messages out;
  std::vector<stf_int> slots;
  for (const auto &c : chunks) {
    slots.resize(c[2]);
    std::iota(slots.begin(), slots.end(), c[1]);
    out.add(c[0], slots.begin(), slots.end());
  }
  return out;
}

// The source leader's part, made before the agreement (everything that
// allocates): the chunks other nodes read here, their senders, and the
// buffers of the exchange.
struct SourcePlan {
  std::vector<int> readers;                      // reading nodes, ascending
  std::vector<std::vector<stf_int>> receivers;   // per reading node: its leader's receiver per chunk (received)
  std::vector<MPI_Request> from_readers;
  Lists sends;  // per local rank: [nchunks, (receiver, offset, count)*, keys...]
  struct Item {
    int reader;               // index in readers
    stf_int k;                // chunk index in the pair
    int sender;               // local rank
    std::size_t receiver_at;  // where its receiver goes in sends[sender]
  };
  std::vector<Item> items;
  std::vector<std::array<stf_int, 2>> replies;  // per item: (sender rank, offset) for its receiver
  int gather_use = 0;  // the largest use of S on this node's ranks (StepGraph::use)
};

void plan_source(const Topology &t, stf_int chunk_units, const Lists &read_by, SourcePlan *sp) {
  std::map<int, std::vector<Key>> read;  // reading node -> the keys it reads here
  for (int p = 0; p < t.local_size; p++) {
    const std::vector<stf_int> &l = read_by[p];
    const stf_int owner = global_rank(t, t.node, p);
    for (std::size_t i = 0; i + 1 < l.size(); i += 2 + l[i + 1]) {
      std::vector<Key> &v = read[l[i]];
      for (stf_int j = 0; j < l[i + 1]; j++) v.push_back({owner, l[i + 2 + j]});
    }
  }
  struct Chunk {
    const Key *keys;
    stf_int n;
  };
  std::vector<Chunk> chunks;
  std::vector<stf_int> sizes;
  std::vector<int> pair;
  for (auto &nk : read) {
    std::vector<Key> &keys = nk.second;
    std::sort(keys.begin(), keys.end());  // the reading leader's order
    const stf_int n = static_cast<stf_int>(keys.size());
    const stf_int c = pair_chunks(n, chunk_units, t.node_size(nk.first), t.local_size);
    sp->readers.push_back(nk.first);
    sp->receivers.emplace_back(c);
    for (stf_int k = 0; k < c; k++) {
      const stf_int a = chunk_start(n, c, k), b = chunk_start(n, c, k + 1);
      chunks.push_back({keys.data() + a, b - a});
      sizes.push_back(b - a);
      pair.push_back(nk.first);
      sp->items.push_back({static_cast<int>(sp->readers.size()) - 1, k, 0, 0});
    }
  }
  sp->from_readers.resize(sp->readers.size());
  const std::vector<Placed> placed = balance(sizes, pair, t.local_size);
  std::vector<std::vector<std::pair<stf_int, int>>> order(t.local_size);  // (offset, chunk) per sender
  for (std::size_t i = 0; i < chunks.size(); i++)
    order[placed[i].owner].push_back({placed[i].offset, static_cast<int>(i)});
  sp->sends.assign(t.local_size, {});
  sp->replies.resize(chunks.size());
  for (int s = 0; s < t.local_size; s++) {
    std::sort(order[s].begin(), order[s].end());
    std::vector<stf_int> &l = sp->sends[s];
    l.push_back(static_cast<stf_int>(order[s].size()));
    for (const auto &oc : order[s]) {
      SourcePlan::Item &it = sp->items[oc.second];
      it.sender = s;
      it.receiver_at = l.size();
      l.insert(l.end(), {-1, oc.first, chunks[oc.second].n});
      sp->replies[oc.second] = {global_rank(t, t.node, s), oc.first};
    }
    const int sender = global_rank(t, t.node, s);
    for (const auto &oc : order[s])
      for (stf_int j = 0; j < chunks[oc.second].n; j++) {
        const Key &k = chunks[oc.second].keys[j];
        l.insert(l.end(), {k.rank, k.offset});
        sp->gather_use = std::max(sp->gather_use, k.rank == sender ? 1 : 2);
      }
  }
}

}  // namespace

int connect_nodes(stf_sf sf, stf_int chunk_units, const std::vector<stf_int> &group, const Lists &read_by,
                  const std::map<int, std::vector<stf_int>> &receivers, StepGraphs *out, int earlier) {
  const Topology &t = *sf->topology;
  const bool leader = t.local_rank == 0;
  int rc = earlier;
  std::vector<Wanted> wanted;
  std::vector<std::array<stf_int, 2>> source;  // per wanted chunk: its sender and offset there
  std::vector<MPI_Request> reqs;                // replies to receive, lists and replies to send
  SourcePlan sp;
  if (!rc) try {
      wanted = parse_group(group);
      source.resize(wanted.size());
      if (leader) plan_source(t, chunk_units, read_by, &sp);
      reqs.reserve(wanted.size() + receivers.size() + sp.replies.size());
    } catch (...) {
      rc = exception_error();
    }
  // Every rank knows its use of every step but S now (the leaders S's).
  if (sf->opts.validate) {
    out->use[S] = sp.gather_use;
    out->use[G] = wanted.empty() ? 0 : 2;  // from another node
    int agreed[kSteps + 1];
    std::copy(out->use, out->use + kSteps, agreed);
    agreed[kSteps] = out->apart;
    rc = agree_max(sf->comm, rc, agreed, kSteps + 1);
    std::copy(agreed, agreed + kSteps, out->use);
    out->apart = agreed[kSteps];
    out->use_agreed = rc == STF_SUCCESS;
  }
  STF_CHECK(rc);

  const int request = sf->tag(Tag::node_request), reply = sf->tag(Tag::node_reply);
  for (std::size_t c = 0; c < wanted.size(); c++) {
    reqs.emplace_back();
    STF_MPI(MPI_Irecv(source[c].data(), 2, MPI_INT, global_rank(t, wanted[c].node, 0), reply, sf->comm, &reqs.back()));
  }
  if (leader) {
    for (std::size_t r = 0; r < sp.readers.size(); r++)
      STF_MPI(MPI_Irecv(sp.receivers[r].data(), static_cast<int>(sp.receivers[r].size()), MPI_INT,
                        global_rank(t, sp.readers[r], 0), request, sf->comm, &sp.from_readers[r]));
    for (const auto &nr : receivers) {
      reqs.emplace_back();
      STF_MPI(MPI_Isend(nr.second.data(), static_cast<int>(nr.second.size()), MPI_INT, global_rank(t, nr.first, 0),
                        request, sf->comm, &reqs.back()));
    }
    STF_MPI(MPI_Waitall(static_cast<int>(sp.from_readers.size()), sp.from_readers.data(), MPI_STATUSES_IGNORE));
    for (std::size_t i = 0; i < sp.items.size(); i++) {
      const SourcePlan::Item &it = sp.items[i];
      const stf_int receiver = sp.receivers[it.reader][it.k];
      sp.sends[it.sender][it.receiver_at] = receiver;
      reqs.emplace_back();
      STF_MPI(MPI_Isend(sp.replies[i].data(), 2, MPI_INT, receiver, reply, sf->comm, &reqs.back()));
    }
  }
  std::vector<stf_int> send_keys;
  const int node_rc = scatter_lists(t, sf->opts.validate, sp.sends, &send_keys, STF_SUCCESS);
  STF_MPI(MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE));
  STF_CHECK(node_rc);
  try {
    std::size_t keys = 0;
    out->cross_root = sender_cross_root(send_keys, &keys);
    out->gather.nroots = sf->nroots;
    for (std::size_t j = keys; j + 1 < send_keys.size(); j += 2)
      out->gather.roots.push_back({send_keys[j], send_keys[j + 1]});
    out->send_units = static_cast<stf_int>(out->gather.roots.size());
    out->cross.nroots = out->send_units;
    for (std::size_t c = 0; c < wanted.size(); c++)
      for (stf_int j = 0; j < wanted[c].n; j++) out->cross.roots.push_back({source[c][0], source[c][1] + j});
  } catch (...) {
    return exception_error();
  }
  return STF_SUCCESS;
}

}  // namespace nodeaware
}  // namespace stf
