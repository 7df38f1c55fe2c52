// Planning a node-aware strategy's steps (steps.h). Set-up is sparse: each
// node's leader learns only what its own node needs and what other nodes ask
// of it (one gather and scatters on the node communicator, one NBX exchange
// between the aggregators and the leaders of the nodes they read from).
#include "nodeaware/steps.h"

#include <algorithm>
#include <array>
#include <map>
#include <numeric>

#include "core/error.h"
#include "plan/discovery.h"

namespace stf {
namespace {

static_assert(sizeof(stf_int) == sizeof(int), "lists travel as MPI_INT");

struct Key {
  stf_int rank, offset;  // a root: its owner and its offset there
};
bool operator<(const Key &a, const Key &b) { return a.rank != b.rank ? a.rank < b.rank : a.offset < b.offset; }
bool operator==(const Key &a, const Key &b) { return a.rank == b.rank && a.offset == b.offset; }

using Lists = std::vector<std::vector<stf_int>>;  // one list per local rank

// core/comm.h's agree over my node's ranks, naming them by their ranks in
// the SF. Only with -stf_validate (alike on every rank): without it a
// failure stays the rank's own, as elsewhere.
int agree_in_node(const Topology &t, bool validate, int rc) {
  return validate ? agree(t.node_comm, rc, t.node_ranks.data() + t.node_offset[t.node]) : rc;
}

// Variable-length lists to and from local rank 0 of my node.
// The node agrees (agree_in_node) before each collective whose buffers a rank
// had to allocate, so that a rank short of memory never leaves the others
// in one: where one failed (earlier, or here), every rank of the node
// returns the failure at that agreement (with -stf_validate, agree_in_node).
// After the last collective a failure is the rank's own.
int gather_lists(const Topology &t, bool validate, const std::vector<stf_int> &mine, Lists *all, int earlier) {
  const MPI_Comm comm = t.node_comm;
  const int size = t.local_size, rank = t.local_rank;
  int rc = earlier;
  std::vector<int> counts, displs;
  std::vector<stf_int> flat;
  if (!rc && rank == 0) try {
      counts.assign(size, 0);
      displs.assign(size, 0);
    } catch (...) {
      rc = exception_error();
    }
  STF_CHECK(agree_in_node(t, validate, rc));
  const int n = static_cast<int>(mine.size());
  STF_MPI(MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm));
  if (rank == 0) try {
      for (int p = 1; p < size; p++) displs[p] = displs[p - 1] + counts[p - 1];
      flat.resize(displs.back() + counts.back());
    } catch (...) {
      rc = exception_error();
    }
  STF_CHECK(agree_in_node(t, validate, rc));
  STF_MPI(MPI_Gatherv(mine.data(), n, MPI_INT, flat.data(), counts.data(), displs.data(), MPI_INT, 0, comm));
  try {
    all->assign(rank == 0 ? size : 0, {});
    for (int p = 0; p < static_cast<int>(all->size()); p++)
      (*all)[p].assign(flat.begin() + displs[p], flat.begin() + displs[p] + counts[p]);
  } catch (...) {
    return exception_error();
  }
  return STF_SUCCESS;
}

int scatter_lists(const Topology &t, bool validate, const Lists &all, std::vector<stf_int> *mine, int earlier) {
  const MPI_Comm comm = t.node_comm;
  const int rank = t.local_rank;
  int rc = earlier;
  std::vector<int> counts, displs;
  std::vector<stf_int> flat;
  if (!rc && rank == 0) try {
      for (const auto &l : all) {
        displs.push_back(static_cast<int>(flat.size()));
        counts.push_back(static_cast<int>(l.size()));
        flat.insert(flat.end(), l.begin(), l.end());
      }
    } catch (...) {
      rc = exception_error();
    }
  STF_CHECK(agree_in_node(t, validate, rc));
  int n = 0;
  STF_MPI(MPI_Scatter(counts.data(), 1, MPI_INT, &n, 1, MPI_INT, 0, comm));
  try {
    mine->assign(n, 0);
  } catch (...) {
    rc = exception_error();
  }
  STF_CHECK(agree_in_node(t, validate, rc));
  STF_MPI(MPI_Scatterv(flat.data(), counts.data(), displs.data(), MPI_INT, mine->data(), n, MPI_INT, 0, comm));
  return STF_SUCCESS;
}

// The chunks of one node pair go to different ranks, so that each is a
// message of its own: pairs largest first (equal totals keep the caller's
// order), a pair's c chunks to the c least loaded of `ways` ranks (lowest
// index on ties), the larger chunks to the less loaded. group[i] names the
// pair of item i; no pair has more than `ways` items. Returns each item's
// owner and its offset in the owner's buffer.
struct Placed {
  int owner;
  stf_int offset;
};
std::vector<Placed> balance(const std::vector<stf_int> &sizes, const std::vector<int> &group, int ways) {
  std::map<int, std::vector<int>> items;  // group -> its items
  std::map<int, stf_int> total;
  std::vector<int> groups;  // in order of first appearance
  for (std::size_t i = 0; i < sizes.size(); i++) {
    if (items.find(group[i]) == items.end()) groups.push_back(group[i]);
    items[group[i]].push_back(static_cast<int>(i));
    total[group[i]] += sizes[i];
  }
  std::stable_sort(groups.begin(), groups.end(), [&](int a, int b) { return total[a] > total[b]; });
  std::vector<stf_int> load(ways, 0);
  std::vector<Placed> out(sizes.size());
  for (int g : groups) {
    std::vector<int> &its = items[g];
    std::stable_sort(its.begin(), its.end(), [&](int a, int b) { return sizes[a] > sizes[b]; });
    std::vector<int> ranks(ways);
    std::iota(ranks.begin(), ranks.end(), 0);
    std::stable_sort(ranks.begin(), ranks.end(), [&](int a, int b) { return load[a] < load[b]; });
    for (std::size_t k = 0; k < its.size(); k++) {
      const int w = ranks[k % ways];
      out[its[k]] = {w, load[w]};
      load[w] += sizes[its[k]];
    }
  }
  return out;
}

int global_rank(const Topology &t, int node, int local) { return t.node_ranks[t.node_offset[node] + local]; }

// 2step: the local rank of `node` that receives the values of an owner of
// local rank `owner_local` (on another node).
int two_step_receiver(const Topology &t, int owner_local, int node) { return owner_local % t.node_size(node); }

// 2step's G root side on an owner, from its plan's: each other node that
// reads my roots asks its receiver (above) for them, each once, in the
// receiver's slot order, which follows the keys (ascending offsets).
Messages two_step_cross_root(const Topology &t, const Messages &readers) {
  std::map<int, std::vector<stf_int>> asked;  // receiver rank -> offsets
  for (int k = 0; k < readers.count(); k++) {
    const int node = t.node_of[readers.ranks[k]];
    if (node == t.node) continue;
    std::vector<stf_int> &v = asked[global_rank(t, node, two_step_receiver(t, t.local_rank, node))];
    v.insert(v.end(), readers.idx.begin() + readers.offset[k], readers.idx.begin() + readers.offset[k + 1]);
  }
  Messages out;
  for (auto &ro : asked) {
    std::sort(ro.second.begin(), ro.second.end());
    out.add(ro.first, ro.second.begin(), std::unique(ro.second.begin(), ro.second.end()));
  }
  return out;
}

// The receiving node's leader: given each local rank's keys (flat pairs),
// decide which rank receives each distinct key, in which slot, and which
// local rank gives a reduce's first contribution to it. Returns, per local
// rank, the answer for its keys (receiver, slot, first: 3 per key) and its
// receive buffer as chunks (source node or -1 for 2step, count, keys).
void lead_receiving_node(const Topology &t, NodeAwareKind kind, stf_int chunk_units, const Lists &asked,
                         Lists *answers, Lists *groups) {
  const int L = t.local_size;
  auto by_node = [&](const Key &a, const Key &b) {
    const int na = t.node_of[a.rank], nb = t.node_of[b.rank];
    return na != nb ? na < nb : a < b;
  };
  std::vector<Key> uniq;
  for (const auto &l : asked)
    for (std::size_t j = 0; j + 1 < l.size(); j += 2) uniq.push_back({l[j], l[j + 1]});
  std::sort(uniq.begin(), uniq.end(), by_node);
  uniq.erase(std::unique(uniq.begin(), uniq.end()), uniq.end());
  const stf_int nu = static_cast<stf_int>(uniq.size());

  std::vector<int> receiver(nu);
  std::vector<stf_int> slot(nu);
  // Per local rank, its chunks in slot order: (source node, first key, count).
  struct Chunk {
    int node;
    stf_int start, n;
  };
  std::vector<std::vector<Chunk>> chunks_of(L);
  if (kind == NodeAwareKind::two_step) {
    std::vector<stf_int> count(L, 0);
    for (stf_int u = 0; u < nu; u++) {
      receiver[u] = two_step_receiver(t, t.local_rank_of[uniq[u].rank], t.node);
      slot[u] = count[receiver[u]]++;
    }
    for (int a = 0; a < L; a++) chunks_of[a].push_back({-1, 0, count[a]});  // keys listed below
  } else {
    std::vector<Chunk> chunks;
    for (stf_int s = 0, e = 0; s < nu; s = e) {  // keys [s, e) come from one node
      const int node = t.node_of[uniq[s].rank];
      while (e < nu && t.node_of[uniq[e].rank] == node) e++;
      // As many chunks as the cap asks for, but no more than either node
      // has ranks: each chunk its own sender and receiver.
      const stf_int n = e - s, ranks = std::min(L, t.node_size(node));
      const stf_int c = chunk_units > 0 ? std::min<stf_int>((n + chunk_units - 1) / chunk_units, ranks) : 1;
      for (stf_int k = 0; k < c; k++) {
        const stf_int a = s + n * k / c, b = s + n * (k + 1) / c;
        chunks.push_back({node, a, b - a});
      }
    }
    std::vector<stf_int> sizes;
    std::vector<int> pair;
    for (const Chunk &c : chunks) sizes.push_back(c.n), pair.push_back(c.node);
    const std::vector<Placed> placed = balance(sizes, pair, L);
    std::vector<std::vector<std::pair<stf_int, int>>> order(L);  // (offset, chunk) per receiver
    for (std::size_t i = 0; i < chunks.size(); i++) {
      order[placed[i].owner].push_back({placed[i].offset, static_cast<int>(i)});
      for (stf_int j = 0; j < chunks[i].n; j++) {
        receiver[chunks[i].start + j] = placed[i].owner;
        slot[chunks[i].start + j] = placed[i].offset + j;
      }
    }
    for (int a = 0; a < L; a++) {
      std::sort(order[a].begin(), order[a].end());
      for (const auto &oc : order[a]) chunks_of[a].push_back(chunks[oc.second]);
    }
  }

  // Who gives a reduce's first contribution to each key: its receiver if it
  // needs the key itself (no message), else the lowest local rank.
  std::vector<std::pair<Key, stf_int>> index(nu);
  for (stf_int u = 0; u < nu; u++) index[u] = {uniq[u], u};
  std::sort(index.begin(), index.end());
  auto find = [&](const Key &k) {
    return std::lower_bound(index.begin(), index.end(), std::make_pair(k, stf_int(-1)))->second;
  };
  std::vector<int> first(nu, -1);
  for (int p = 0; p < L; p++)
    for (std::size_t j = 0; j + 1 < asked[p].size(); j += 2) {
      const stf_int u = find({asked[p][j], asked[p][j + 1]});
      if (first[u] == -1 || (p == receiver[u] && first[u] != p)) first[u] = p;
    }

  answers->assign(L, {});
  for (int p = 0; p < L; p++)
    for (std::size_t j = 0; j + 1 < asked[p].size(); j += 2) {
      const stf_int u = find({asked[p][j], asked[p][j + 1]});
      (*answers)[p].insert((*answers)[p].end(), {global_rank(t, t.node, receiver[u]), slot[u], first[u] == p});
    }
  groups->assign(L, {});
  std::vector<std::vector<stf_int>> two_step_keys(L);
  if (kind == NodeAwareKind::two_step)
    for (stf_int u = 0; u < nu; u++) two_step_keys[receiver[u]].insert(two_step_keys[receiver[u]].end(), {uniq[u].rank, uniq[u].offset});
  for (int a = 0; a < L; a++)
    for (const Chunk &c : chunks_of[a]) {
      if (c.n == 0) continue;
      std::vector<stf_int> &g = (*groups)[a];
      g.insert(g.end(), {c.node, c.n});
      if (kind == NodeAwareKind::two_step) g.insert(g.end(), two_step_keys[a].begin(), two_step_keys[a].end());
      else
        for (stf_int j = 0; j < c.n; j++) g.insert(g.end(), {uniq[c.start + j].rank, uniq[c.start + j].offset});
    }
}

// A chunk this rank receives: where its keys are in `group`.
struct Wanted {
  int node;
  stf_int n;
  std::size_t keys;  // index of its first key in the group list
};

std::vector<Wanted> parse_group(const std::vector<stf_int> &group) {
  std::vector<Wanted> out;
  for (std::size_t i = 0; i + 1 < group.size(); i += 2 + 2 * group[i + 1])
    out.push_back({group[i], group[i + 1], i + 2});
  return out;
}

// G's root side on a sender, from its leader's list (connect_nodes): per
// receiver, the slots of its chunks from here in the receiver's slot order
// (its chunk order). *keys: where the list's keys start.
Messages sender_cross_root(const std::vector<stf_int> &list, std::size_t *keys) {
  const std::size_t nchunks = static_cast<std::size_t>(list.at(0));
  *keys = 1 + 4 * nchunks;
  std::vector<std::array<stf_int, 4>> chunks(nchunks);  // receiver, its chunk, offset, count
  for (std::size_t c = 0; c < nchunks; c++)
    for (std::size_t j = 0; j < 4; j++) chunks[c][j] = list.at(1 + 4 * c + j);
  std::sort(chunks.begin(), chunks.end());
  Messages out;
  for (const auto &c : chunks) {
    if (out.ranks.empty() || out.ranks.back() != c[0]) {
      out.ranks.push_back(c[0]);
      out.offset.push_back(out.offset.back());
    }
    for (stf_int j = 0; j < c[3]; j++) out.idx.push_back(c[2] + j);
    out.offset.back() += c[3];
  }
  return out;
}

// 3step and split: ask each source node's leader for my chunks, let the
// leaders give them to their ranks (the gather step, and who receives each:
// the cross step's root side), and learn who sends each chunk from where
// (the cross step's roots). A rank that failed
// (earlier, too) asks for nothing; every rank agrees (with -stf_validate)
// after the discovery and the leaders' work, before any leader answers, so
// that none that failed leaves askers waiting for its answer; a failure
// after that is the rank's own (or its node's), once it has taken part in
// everything.
int connect_nodes(stf_sf sf, const std::vector<stf_int> &group, StepGraphs *out, int earlier) {
  const Topology &t = *sf->topology;
  int rc = earlier;
  std::vector<Wanted> wanted;
  std::map<int, std::vector<stf_int>> to_leader;  // leader rank -> [chunk, n, keys...]...
  std::map<int, int> chunks_to;
  Messages requests{{}, {}, {}}, asked{{}, {}, {}};  // empty: allocating nothing yet
  if (!rc) try {
      wanted = parse_group(group);
      for (std::size_t c = 0; c < wanted.size(); c++) {
        const int leader = global_rank(t, wanted[c].node, 0);
        std::vector<stf_int> &m = to_leader[leader];
        m.insert(m.end(), {static_cast<stf_int>(c), wanted[c].n});
        m.insert(m.end(), group.begin() + wanted[c].keys, group.begin() + wanted[c].keys + 2 * wanted[c].n);
        chunks_to[leader]++;
      }
      requests = Messages();
      for (const auto &lm : to_leader) requests.add(lm.first, lm.second.begin(), lm.second.end());
    } catch (...) {
      rc = exception_error();
      requests = Messages{{}, {}, {}};  // asks for nothing, and expects no answer
      chunks_to.clear();
    }
  try {
    const int found = discover(*sf, sf->opts.twosided, requests, &asked, Tag::node_request);
    if (!rc) rc = found;
  } catch (...) {
    if (!rc) rc = exception_error();  // after it has taken part
  }

  // The source node's leader: give the chunks asked of this node to its ranks.
  Lists sends;
  std::vector<std::vector<stf_int>> replies;
  std::vector<MPI_Request> reply_reqs;
  if (!rc && t.local_rank == 0) try {
      sends.resize(t.local_size);
      replies.resize(asked.count());
      struct Item {
        int from;        // index in asked
        stf_int chunk, n;
        stf_int keys;    // index in asked.idx
      };
      std::vector<Item> items;
      std::vector<stf_int> sizes;
      std::vector<int> pair;  // the asking node: its chunks go to different ranks here too
      for (int k = 0; k < asked.count(); k++)
        for (stf_int i = asked.offset[k]; i + 1 < asked.offset[k + 1]; i += 2 + 2 * asked.idx[i + 1]) {
          items.push_back({k, asked.idx[i], asked.idx[i + 1], i + 2});
          sizes.push_back(asked.idx[i + 1]);
          pair.push_back(t.node_of[asked.ranks[k]]);
        }
      const std::vector<Placed> placed = balance(sizes, pair, t.local_size);
      std::vector<std::vector<std::pair<stf_int, int>>> order(t.local_size);
      for (std::size_t i = 0; i < items.size(); i++) {
        order[placed[i].owner].push_back({placed[i].offset, static_cast<int>(i)});
        replies[items[i].from].insert(replies[items[i].from].end(),
                                      {items[i].chunk, global_rank(t, t.node, placed[i].owner), placed[i].offset});
      }
      // Each sender's list: its chunk count, (receiver, the receiver's chunk,
      // offset, count) per chunk, then the keys in offset order.
      for (int s = 0; s < t.local_size; s++) {
        std::sort(order[s].begin(), order[s].end());
        sends[s].push_back(static_cast<stf_int>(order[s].size()));
        for (const auto &oc : order[s]) {
          const Item &it = items[oc.second];
          sends[s].insert(sends[s].end(), {asked.ranks[it.from], it.chunk, oc.first, it.n});
        }
        for (const auto &oc : order[s]) {
          const Item &it = items[oc.second];
          sends[s].insert(sends[s].end(), asked.idx.begin() + it.keys, asked.idx.begin() + it.keys + 2 * it.n);
        }
      }
      reply_reqs.resize(asked.count());
    } catch (...) {
      rc = exception_error();
    }
  if (sf->opts.validate) rc = agree(sf->comm, rc);
  STF_CHECK(rc);
  for (int k = 0; k < static_cast<int>(reply_reqs.size()); k++)
    STF_MPI(MPI_Isend(replies[k].data(), static_cast<int>(replies[k].size()), MPI_INT, asked.ranks[k],
                      sf->tag(Tag::node_reply), sf->comm, &reply_reqs[k]));
  std::vector<stf_int> send_keys;
  const int node_rc = scatter_lists(t, sf->opts.validate, sends, &send_keys, STF_SUCCESS);

  // My chunks' senders and their offsets in the senders' buffers. Every
  // answer is received, into no buffer where there is no memory for it (a
  // truncation), so that its leader's send completes.
  std::vector<std::pair<int, stf_int>> source;  // (rank, offset) per chunk
  try {
    source.resize(wanted.size());
  } catch (...) {
    rc = exception_error();
  }
  for (const auto &lc : chunks_to) {
    std::vector<stf_int> reply;
    try {
      if (!rc) reply.resize(3 * lc.second);
    } catch (...) {
      rc = exception_error();
    }
    if (rc) {
      MPI_Recv(nullptr, 0, MPI_INT, lc.first, sf->tag(Tag::node_reply), sf->comm, MPI_STATUS_IGNORE);
      continue;
    }
    STF_MPI(MPI_Recv(reply.data(), static_cast<int>(reply.size()), MPI_INT, lc.first, sf->tag(Tag::node_reply),
                     sf->comm, MPI_STATUS_IGNORE));
    for (std::size_t j = 0; j + 2 < reply.size(); j += 3) source[reply[j]] = {reply[j + 1], reply[j + 2]};
  }
  STF_MPI(MPI_Waitall(static_cast<int>(reply_reqs.size()), reply_reqs.data(), MPI_STATUSES_IGNORE));
  if (rc || node_rc) return rc ? rc : node_rc;
  try {
    std::size_t keys = 0;
    out->cross_root = sender_cross_root(send_keys, &keys);
    out->gather.nroots = sf->nroots;
    for (std::size_t j = keys; j + 1 < send_keys.size(); j += 2)
      out->gather.roots.push_back({send_keys[j], send_keys[j + 1]});
    out->send_units = static_cast<stf_int>(out->gather.roots.size());
    out->cross.nroots = out->send_units;
    for (std::size_t c = 0; c < wanted.size(); c++)
      for (stf_int j = 0; j < wanted[c].n; j++) out->cross.roots.push_back({source[c].first, source[c].second + j});
  } catch (...) {
    return exception_error();
  }
  return STF_SUCCESS;
}

}  // namespace

// Every rank takes part in every collective whatever failed where (out of
// memory, or earlier): each node agrees before its node collectives
// (gather_lists, scatter_lists), every rank before the leaders answer
// (connect_nodes); another failure is the rank's own (or its node's), for
// the caller to agree on. The agreements are made with -stf_validate.
int plan_node_aware(stf_sf sf, NodeAwareKind kind, stf_int chunk_units, StepGraphs *out, int earlier) {
  const Topology &t = *sf->topology;
  *out = StepGraphs();
  int rc = earlier;
  // My edges: those inside my node go directly; the others by key.
  std::vector<stf_int> remote_slots;
  std::vector<Key> remote_keys, keys;
  std::vector<stf_int> flat;
  if (!rc) try {
      out->local.nroots = sf->nroots;
      for (stf_int i = 0; i < sf->nleaves; i++) {
        const stf_node &r = sf->iremote[i];
        const stf_int slot = sf->ilocal ? sf->ilocal[i] : i;
        if (t.same_node(r.rank)) {
          out->local.leaves.push_back(slot);
          out->local.roots.push_back(r);
        } else {
          remote_slots.push_back(slot);
          remote_keys.push_back({r.rank, r.index});
        }
      }
      keys = remote_keys;
      std::sort(keys.begin(), keys.end());
      keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
      for (const Key &k : keys) flat.insert(flat.end(), {k.rank, k.offset});
    } catch (...) {
      rc = exception_error();
    }

  // The leader answers each rank with one list: the length of its answer,
  // the answer, then its group.
  const bool validate = sf->opts.validate;
  Lists asked, answers, groups;
  rc = gather_lists(t, validate, flat, &asked, rc);
  if (!rc && t.local_rank == 0) try {
      lead_receiving_node(t, kind, chunk_units, asked, &answers, &groups);
      for (int p = 0; p < t.local_size; p++) {
        answers[p].insert(answers[p].begin(), static_cast<stf_int>(answers[p].size()));
        answers[p].insert(answers[p].end(), groups[p].begin(), groups[p].end());
      }
    } catch (...) {
      rc = exception_error();
    }
  std::vector<stf_int> answer, group;
  rc = scatter_lists(t, validate, answers, &answer, rc);
  if (!rc) try {
      const stf_int n = answer.at(0);
      group.assign(answer.begin() + 1 + n, answer.end());
      answer.erase(answer.begin() + 1 + n, answer.end());
      answer.erase(answer.begin());
    } catch (...) {
      rc = exception_error();
    }

  // Between nodes: 3step and split agree there; for 2step the caller does.
  if (kind != NodeAwareKind::two_step) STF_CHECK(connect_nodes(sf, group, out, rc));
  STF_CHECK(rc);
  try {
    for (const Wanted &w : parse_group(group)) out->recv_units += w.n;
    if (kind == NodeAwareKind::two_step) {
      out->cross.nroots = sf->nroots;
      for (std::size_t j = 2; j + 1 < group.size(); j += 2) out->cross.roots.push_back({group[j], group[j + 1]});
      out->cross_root = two_step_cross_root(t, sf->plan->root);
    }
    // The leaves that read from other nodes, through the receive buffers.
    out->first.nroots = out->rest.nroots = out->recv_units;
    std::vector<char> given(keys.size(), 0);
    for (std::size_t i = 0; i < remote_slots.size(); i++) {
      const std::size_t k = std::lower_bound(keys.begin(), keys.end(), remote_keys[i]) - keys.begin();
      const stf_node from = {answer[3 * k], answer[3 * k + 1]};
      StepGraph &g = answer[3 * k + 2] && !given[k] ? out->first : out->rest;
      if (&g == &out->first) given[k] = 1;
      g.leaves.push_back(remote_slots[i]);
      g.roots.push_back(from);
    }
  } catch (...) {
    return exception_error();
  }
  return STF_SUCCESS;
}

}  // namespace stf
