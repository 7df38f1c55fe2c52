// Planning a node-aware strategy's steps (steps.h). Set-up is sparse: each
// node's leader learns only what its own node needs and what other nodes
// read of it (one gather and scatters on the node communicator; for 3step
// and split, messages between the leaders of each node pair, connect.h).
#include "nodeaware/steps.h"

#include <algorithm>
#include <map>

#include "core/error.h"
#include "nodeaware/connect.h"
#include "nodeaware/node_lists.h"

namespace stf {
namespace {

using namespace nodeaware;

// 2step: the local rank of `node` that receives the values of an owner of
// local rank `owner_local` (on another node).
int two_step_receiver(const Topology &t, int owner_local, int node) { return owner_local % t.node_size(node); }

// The offsets of my roots that each other node reads, from my plan's root
// side (readers): ascending, each once.
std::map<int, std::vector<stf_int>> read_by_node(const Topology &t, const Messages &readers) {
  std::map<int, std::vector<stf_int>> read;
  for (int k = 0; k < readers.count(); k++) {
    const int node = t.node_of[readers.ranks[k]];
    if (node == t.node) continue;
    std::vector<stf_int> &v = read[node];
    v.insert(v.end(), readers.idx.begin() + readers.offset[k], readers.idx.begin() + readers.offset[k + 1]);
  }
  for (auto &no : read) {
    std::sort(no.second.begin(), no.second.end());
    no.second.erase(std::unique(no.second.begin(), no.second.end()), no.second.end());
  }
  return read;
}

// 2step's G root side on an owner: each other node that reads my roots asks
// its receiver (above) for them, each once, in the receiver's slot order,
// which follows the keys (ascending offsets).
Messages two_step_cross_root(const Topology &t, const Messages &readers) {
  Messages out;
  for (const auto &no : read_by_node(t, readers))  // receivers of different nodes: ascending with the nodes
    out.add(global_rank(t, no.first, two_step_receiver(t, t.local_rank, no.first)), no.second.begin(),
            no.second.end());
  return out;
}

// The receiving node's leader: given each local rank's keys (flat pairs),
// decide which rank receives each distinct key, in which slot, and which
// local rank gives a reduce's first contribution to it. Returns, per local
// rank, the answer for its keys (receiver, slot, first: 3 per key) and its
// receive buffer as chunks (source node or -1 for 2step, count, keys); for
// 3step and split also, per source node, the receiver of each of its chunks.
void lead_receiving_node(const Topology &t, NodeAwareKind kind, stf_int chunk_units, const Lists &asked,
                         Lists *answers, Lists *groups, std::map<int, std::vector<stf_int>> *receivers) {
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
      const stf_int n = e - s, c = pair_chunks(n, chunk_units, L, t.node_size(node));
      for (stf_int k = 0; k < c; k++) {
        const stf_int a = s + chunk_start(n, c, k), b = s + chunk_start(n, c, k + 1);
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
      (*receivers)[chunks[i].node].push_back(global_rank(t, t.node, placed[i].owner));
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

}  // namespace

// Every rank takes part in every collective whatever failed where (out of
// memory, or earlier): each node agrees before its node collectives
// (gather_lists, scatter_lists), every rank before the leaders answer
// (connect_nodes); another failure is the rank's own (or its node's), for
// the caller to agree on. The agreements are made with -stf_validate.
int plan_node_aware(stf_sf sf, NodeAwareKind kind, stf_int chunk_units, StepGraphs *out, int earlier) {
  const Topology &t = *sf->topology;
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
      // To the leader: my keys, and for 3step and split what each other
      // node reads of my roots (for the leader as a source, connect.h).
      flat.push_back(static_cast<stf_int>(keys.size()));
      for (const Key &k : keys) flat.insert(flat.end(), {k.rank, k.offset});
      if (kind != NodeAwareKind::two_step)
        for (const auto &no : read_by_node(t, sf->plan->root)) {
          flat.insert(flat.end(), {no.first, static_cast<stf_int>(no.second.size())});
          flat.insert(flat.end(), no.second.begin(), no.second.end());
        }
    } catch (...) {
      rc = exception_error();
    }

  // The leader answers each rank with one list: the length of its answer,
  // the answer, then its group.
  const bool validate = sf->opts.validate;
  Lists asked, read_by, answers, groups;
  std::map<int, std::vector<stf_int>> receivers;
  rc = gather_lists(t, validate, flat, &asked, rc);
  if (!rc && t.local_rank == 0) try {
      read_by.resize(asked.size());
      for (std::size_t p = 0; p < asked.size(); p++) {
        const std::size_t end = 1 + 2 * static_cast<std::size_t>(asked[p].at(0));
        read_by[p].assign(asked[p].begin() + end, asked[p].end());
        asked[p].erase(asked[p].begin() + end, asked[p].end());
        asked[p].erase(asked[p].begin());
      }
      lead_receiving_node(t, kind, chunk_units, asked, &answers, &groups, &receivers);
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
      for (const Wanted &w : parse_group(group)) out->recv_units += w.n;
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
      out->use[L] = out->local.use(sf->rank);
      out->use[R1] = out->first.use(sf->rank);
      out->use[R2] = out->rest.use(sf->rank);
    } catch (...) {
      rc = exception_error();
    }

  // Between nodes: 3step and split agree there; for 2step the caller does.
  if (kind != NodeAwareKind::two_step)
    STF_CHECK(connect_nodes(sf, chunk_units, group, read_by, receivers, out, rc));
  STF_CHECK(rc);
  if (kind == NodeAwareKind::two_step) try {
      out->cross.nroots = sf->nroots;
      for (std::size_t j = 2; j + 1 < group.size(); j += 2) out->cross.roots.push_back({group[j], group[j + 1]});
      out->cross_root = two_step_cross_root(t, sf->plan->root);
    } catch (...) {
      return exception_error();
    }
  return STF_SUCCESS;
}

}  // namespace stf
