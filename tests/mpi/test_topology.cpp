// Node topology as an SF sees it (stf_get_node_layout, stf_view): the real
// nodes (ranks grouped by host name, which is what MPI_COMM_TYPE_SHARED
// gives: one node here, one per host across the cluster of
// scripts/cluster), and emulated nodes of K consecutive ranks
// (-stf_ranks_per_node K, STF_RANKS_PER_NODE), for several K including ones
// that leave the last node short. Bad values are refused. The counters of
// messages and bytes sent in and off the node follow the layout.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "check.h"

using namespace stft;

namespace {

struct Layout {
  int node, nnodes, local_rank, local_size;
};

// A ring SF set up with options; its layout, and what stf_view says on rank 0.
Layout layout_of(Checker &ck, const char *options, std::string *view) {
  int me = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Layout l{-1, -1, -1, -1};
  stf_sf sf = nullptr;
  ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create");
  ck.code(stf_set_sf_options(sf, options), STF_SUCCESS, "stf_set_sf_options");
  stf_node remote = {(me + 1) % size, 0};
  ck.code(stf_set_graph(sf, 1, 1, nullptr, STF_COPY_VALUES, &remote, STF_COPY_VALUES), STF_SUCCESS, "graph");
  ck.code(stf_get_node_layout(sf, &l.node, &l.nnodes, &l.local_rank, &l.local_size), STF_ERR_STATE,
          "stf_get_node_layout before set-up");
  ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup");
  ck.code(stf_get_node_layout(sf, &l.node, &l.nnodes, &l.local_rank, &l.local_size), STF_SUCCESS,
          "stf_get_node_layout");
  std::FILE *f = std::tmpfile();
  ck.code(stf_view(sf, f), STF_SUCCESS, "stf_view");
  view->clear();
  std::rewind(f);
  char buf[512];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) view->append(buf, n);
  std::fclose(f);
  stf_destroy(&sf);
  return l;
}

// Hosts in order of their lowest rank: the nodes MPI_COMM_TYPE_SHARED gives
// (one host per node on a cluster, and on one machine).
Layout by_host(int me, int size) {
  char name[MPI_MAX_PROCESSOR_NAME] = {0};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  std::vector<char> all(static_cast<std::size_t>(size) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                MPI_COMM_WORLD);
  std::vector<std::string> hosts;
  std::vector<int> node_of(size);
  for (int r = 0; r < size; r++) {
    const std::string h(&all[static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME]);
    int n = 0;
    while (n < static_cast<int>(hosts.size()) && hosts[n] != h) n++;
    if (n == static_cast<int>(hosts.size())) hosts.push_back(h);
    node_of[r] = n;
  }
  Layout l{node_of[me], static_cast<int>(hosts.size()), 0, 0};
  for (int r = 0; r < size; r++)
    if (node_of[r] == l.node) (r < me ? l.local_rank : l.local_size)++;
  l.local_size += l.local_rank;
  return l;
}

// Every rank's leaves read root 0 of every other rank, so a bcast of one
// double sends a message to every other rank: local_size - 1 of them stay
// on the node.
void sent_by_locality(Checker &ck, const char *options, const Layout &l) {
  int me = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<stf_node> remote;
  for (int r = 0; r < size; r++)
    if (r != me) remote.push_back({r, 0});
  stf_sf sf = nullptr;
  ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create");
  ck.code(stf_set_sf_options(sf, options), STF_SUCCESS, "stf_set_sf_options");
  ck.code(stf_set_graph(sf, 1, size - 1, nullptr, STF_COPY_VALUES, remote.data(), STF_COPY_VALUES), STF_SUCCESS,
          "graph");
  double root = me;
  std::vector<double> leaves(size, -1);
  ck.code(stf_bcast(sf, MPI_DOUBLE, &root, leaves.data(), MPI_REPLACE), STF_SUCCESS, "stf_bcast");
  stf_stats s = stf_stats_init();
  ck.code(stf_get_stats(sf, &s), STF_SUCCESS, "stf_get_stats");
  const long long in = l.local_size - 1, off = size - l.local_size;
  ck.check(s.messages_sent_in_node == in && s.messages_sent_off_node == off && s.bytes_sent_in_node == 8 * in &&
               s.bytes_sent_off_node == 8 * off && s.messages_sent == in + off,
           "sent in node %lld (%lld B), off node %lld (%lld B); want %lld (%lld B), %lld (%lld B)",
           s.messages_sent_in_node, s.bytes_sent_in_node, s.messages_sent_off_node, s.bytes_sent_off_node, in, 8 * in,
           off, 8 * off);
  stf_destroy(&sf);
}

void expect(Checker &ck, const Layout &got, const Layout &want) {
  ck.check(got.node == want.node && got.nnodes == want.nnodes && got.local_rank == want.local_rank &&
               got.local_size == want.local_size,
           "node %d of %d, local rank %d of %d; want node %d of %d, local rank %d of %d", got.node, got.nnodes,
           got.local_rank, got.local_size, want.node, want.nnodes, want.local_rank, want.local_size);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Checker ck("test_topology", argc, argv, 1);
  std::string view;

  // The environment may set K (the STF_RANKS_PER_NODE run); an options
  // string of "-stf_ranks_per_node 0" asks for the real nodes either way.
  ck.context("real nodes");
  expect(ck, layout_of(ck, "-stf_ranks_per_node 0", &view), by_host(me, size));
  sent_by_locality(ck, "-stf_ranks_per_node 0", by_host(me, size));
  if (me == 0) ck.check(view.find("of ranks that share memory") != std::string::npos, "view:\n%s", view.c_str());

  for (int k : {1, 2, 3, 4}) {
    ck.context("emulated nodes of " + std::to_string(k) + " ranks");
    const std::string opt = "-stf_ranks_per_node " + std::to_string(k);
    const int nnodes = (size + k - 1) / k, node = me / k;
    const Layout want{node, nnodes, me % k, std::min(k, size - node * k)};
    expect(ck, layout_of(ck, opt.c_str(), &view), want);
    sent_by_locality(ck, opt.c_str(), want);
    if (me == 0)
      ck.check(view.find(std::to_string(k) + " consecutive ranks each") != std::string::npos &&
                   view.find("local rank 0 of") != std::string::npos,
               "view:\n%s", view.c_str());
  }

  const char *env = std::getenv("STF_RANKS_PER_NODE");
  if (env && *env) {
    ck.context("STF_RANKS_PER_NODE");
    const int k = std::atoi(env), node = me / k;
    expect(ck, layout_of(ck, "", &view), Layout{node, (size + k - 1) / k, me % k, std::min(k, size - node * k)});
  }

  ck.context("bad values");
  stf_sf sf = nullptr;
  ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create");
  for (const char *bad : {"-stf_ranks_per_node -1", "-stf_ranks_per_node two", "-stf_ranks_per_node 2x"}) {
    ck.code(stf_set_sf_options(sf, bad), STF_ERR_OPTION, bad);
    ck.has_message(bad);
  }
  ck.check(std::strstr(stf_options_help(), "stf_ranks_per_node") != nullptr, "help lacks -stf_ranks_per_node");
  stf_destroy(&sf);

  int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
