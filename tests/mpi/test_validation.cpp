// Input validation (one check per documented rule, with its error code and
// a message) and the object lifecycle: create/destroy, copy modes of
// stf_set_graph, reset, duplicate, view, options.
#include <cstdlib>
#include <climits>
#include <cstring>
#include <string>

#include "check.h"
#include "graphs.h"
#include "oracle.h"
#include "runner.h"
#include "units.h"

using namespace stft;

namespace {

int me = 0, nranks = 1;

// Expect `rc == want` and a non-empty message.
void refused(Checker &ck, int rc, int want, const char *what) {
  if (ck.code(rc, want, what)) ck.has_message(what);
}

void error_names(Checker &ck) {
  ck.context("stf_error_name");
  static const char *names[] = {
      "STF_SUCCESS",      "STF_ERR_ARG",    "STF_ERR_NULL",    "STF_ERR_RANK",
      "STF_ERR_OFFSET",   "STF_ERR_DUPLICATE", "STF_ERR_STATE", "STF_ERR_TYPE",
      "STF_ERR_OP",       "STF_ERR_REQUEST", "STF_ERR_OPTION", "STF_ERR_MPI",
      "STF_ERR_MEMORY",   "STF_ERR_UNSUPPORTED", "STF_ERR_INTERNAL"};
  for (int c = STF_SUCCESS; c <= STF_ERR_INTERNAL; ++c) {
    const char *n = stf_error_name(c);
    ck.check(n && std::strcmp(n, names[c]) == 0, "stf_error_name(%d) = \"%s\", expected \"%s\"", c,
             n ? n : "(null)", names[c]);
  }
  ck.check(stf_error_name(-1) != nullptr && stf_error_name(1000) != nullptr,
           "stf_error_name of an unknown code returned NULL");
}

void options(Checker &ck) {
  ck.context("options");
  const char *help = stf_options_help();
  ck.check(help && std::strstr(help, "-stf_twosided") && std::strstr(help, "STF_TWOSIDED") &&
               std::strstr(help, "-stf_validate") && std::strstr(help, "STF_VALIDATE"),
           "stf_options_help() does not list -stf_twosided/-stf_validate with their variables");
  refused(ck, stf_set_options("-stf_no_such_option 1"), STF_ERR_OPTION, "unknown option");
  refused(ck, stf_set_options("-stf_twosided carrier_pigeon"), STF_ERR_OPTION, "bad -stf_twosided value");
  refused(ck, stf_set_options("-stf_validate maybe"), STF_ERR_OPTION, "bad -stf_validate value");
  ck.code(stf_set_options(""), STF_SUCCESS, "empty options string");
  ck.code(stf_set_options("-stf_twosided nbx"), STF_SUCCESS, "-stf_twosided nbx");
  ck.code(stf_set_options("-stf_twosided allreduce"), STF_SUCCESS, "-stf_twosided allreduce");
  stf_sf sf = nullptr;
  ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create");
  refused(ck, stf_set_sf_options(sf, "-stf_bogus"), STF_ERR_OPTION, "stf_set_sf_options unknown option");
  ck.code(stf_set_sf_options(sf, "-stf_validate 1 -stf_twosided nbx"), STF_SUCCESS, "stf_set_sf_options");
  refused(ck, stf_set_sf_options(nullptr, "-stf_validate 1"), STF_ERR_NULL, "stf_set_sf_options(NULL sf)");
  stf_destroy(&sf);
}

// Every local rule of stf_set_graph, and calls that need a graph.
void graph_rules(Checker &ck) {
  ck.context("stf_set_graph rules");
  stf_sf sf = nullptr;
  if (!ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create")) return;
  const stf_node good[2] = {{0, 0}, {nranks - 1, 0}};
  const stf_int slots[2] = {4, 2};
  refused(ck, stf_set_graph(sf, -1, 0, nullptr, STF_COPY_VALUES, nullptr, STF_COPY_VALUES), STF_ERR_ARG, "nroots < 0");
  refused(ck, stf_set_graph(sf, 1, -1, nullptr, STF_COPY_VALUES, good, STF_COPY_VALUES), STF_ERR_ARG, "nleaves < 0");
  refused(ck, stf_set_graph(sf, 1, 2, slots, STF_COPY_VALUES, nullptr, STF_COPY_VALUES), STF_ERR_NULL, "iremote NULL");
  refused(ck, stf_set_graph(nullptr, 1, 2, slots, STF_COPY_VALUES, good, STF_COPY_VALUES), STF_ERR_NULL, "NULL sf");
  const stf_node neg_rank[2] = {{0, 0}, {-1, 0}};
  refused(ck, stf_set_graph(sf, 1, 2, nullptr, STF_COPY_VALUES, neg_rank, STF_COPY_VALUES), STF_ERR_RANK, "rank < 0");
  const stf_node big_rank[2] = {{nranks, 0}, {0, 0}};
  refused(ck, stf_set_graph(sf, 1, 2, nullptr, STF_COPY_VALUES, big_rank, STF_COPY_VALUES), STF_ERR_RANK, "rank >= size");
  const stf_node neg_index[2] = {{0, 0}, {0, -3}};
  refused(ck, stf_set_graph(sf, 1, 2, slots, STF_COPY_VALUES, neg_index, STF_COPY_VALUES), STF_ERR_OFFSET, "root index < 0");
  const stf_int neg_slot[2] = {1, -1};
  refused(ck, stf_set_graph(sf, 1, 2, neg_slot, STF_COPY_VALUES, good, STF_COPY_VALUES), STF_ERR_OFFSET, "ilocal < 0");
  const stf_int dup_slot[3] = {3, 1, 3};
  const stf_node three[3] = {{0, 0}, {0, 0}, {0, 0}};
  refused(ck, stf_set_graph(sf, 1, 3, dup_slot, STF_COPY_VALUES, three, STF_COPY_VALUES), STF_ERR_DUPLICATE, "duplicate ilocal");

  // Refused calls left no graph behind: everything that needs one says so.
  ck.context("no graph yet");
  int buf[64] = {0};
  const stf_int *deg = nullptr;
  stf_sf multi = nullptr;
  stf_request req = nullptr;
  refused(ck, stf_get_graph(sf, nullptr, nullptr, nullptr, nullptr), STF_ERR_STATE, "stf_get_graph");
  refused(ck, stf_bcast(sf, MPI_INT, buf, buf + 32, MPI_REPLACE), STF_ERR_STATE, "stf_bcast");
  refused(ck, stf_bcast_begin(sf, MPI_INT, buf, buf + 32, MPI_REPLACE, &req), STF_ERR_STATE, "stf_bcast_begin");
  refused(ck, stf_reduce(sf, MPI_INT, buf + 32, buf, MPI_SUM), STF_ERR_STATE, "stf_reduce");
  refused(ck, stf_fetch_and_op(sf, MPI_INT, buf, buf + 32, buf + 48, MPI_SUM), STF_ERR_STATE, "stf_fetch_and_op");
  refused(ck, stf_compute_degree(sf, &deg), STF_ERR_STATE, "stf_compute_degree");
  refused(ck, stf_gather(sf, MPI_INT, buf + 32, buf), STF_ERR_STATE, "stf_gather");
  refused(ck, stf_scatter(sf, MPI_INT, buf, buf + 32), STF_ERR_STATE, "stf_scatter");
  refused(ck, stf_get_multi_sf(sf, &multi), STF_ERR_STATE, "stf_get_multi_sf");
  ck.code_either(stf_setup(sf), STF_ERR_STATE, STF_SUCCESS, "stf_setup without graph");

  ck.context("NULL handles");
  refused(ck, stf_create(MPI_COMM_WORLD, nullptr), STF_ERR_NULL, "stf_create(comm, NULL)");
  refused(ck, stf_destroy(nullptr), STF_ERR_NULL, "stf_destroy(NULL)");
  refused(ck, stf_setup(nullptr), STF_ERR_NULL, "stf_setup(NULL)");
  refused(ck, stf_get_graph(nullptr, nullptr, nullptr, nullptr, nullptr), STF_ERR_NULL, "stf_get_graph(NULL)");
  refused(ck, stf_bcast(nullptr, MPI_INT, buf, buf + 32, MPI_REPLACE), STF_ERR_NULL, "stf_bcast(NULL sf)");
  refused(ck, stf_compute_degree(nullptr, &deg), STF_ERR_NULL, "stf_compute_degree(NULL sf)");

  // With a valid graph: unit MPI_DATATYPE_NULL.
  ck.context("MPI_DATATYPE_NULL unit");
  if (ck.code(stf_set_graph(sf, 1, 2, slots, STF_COPY_VALUES, good, STF_COPY_VALUES), STF_SUCCESS, "valid stf_set_graph")) {
    refused(ck, stf_bcast(sf, MPI_DATATYPE_NULL, buf, buf + 32, MPI_REPLACE), STF_ERR_TYPE, "stf_bcast");
    refused(ck, stf_reduce(sf, MPI_DATATYPE_NULL, buf + 32, buf, MPI_SUM), STF_ERR_TYPE, "stf_reduce");
    refused(ck, stf_fetch_and_op(sf, MPI_DATATYPE_NULL, buf, buf + 32, buf + 48, MPI_SUM), STF_ERR_TYPE, "stf_fetch_and_op");
    refused(ck, stf_gather(sf, MPI_DATATYPE_NULL, buf + 32, buf), STF_ERR_TYPE, "stf_gather");
    ck.check(buf[0] == 0 && buf[36] == 0, "a refused operation wrote data");
    // Still usable afterwards.
    int root = 100 + me, leaves[8] = {0};
    ck.code(stf_bcast(sf, MPI_INT, &root, leaves, MPI_REPLACE), STF_SUCCESS, "stf_bcast after refusals");
    ck.check(leaves[4] == 100 && leaves[2] == 100 + nranks - 1, "bcast after refusals gave %d %d", leaves[4], leaves[2]);
  }
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
  ck.check(sf == nullptr, "stf_destroy did not set the handle to NULL");
}

// A graph valid everywhere except that, given a bad offset (>= 0), the last
// rank points one leaf at it on rank 0, which has 3 roots: with validation,
// stf_setup fails on every rank.
LocalGraph out_of_range_graph(stf_int bad_offset) {
  LocalGraph g;
  g.nroots = 3;
  g.iremote = {{0, 2}, {(me + 1) % nranks, 1}};
  if (bad_offset >= 0 && me == nranks - 1) g.iremote[0].index = bad_offset;
  return g;
}

// With validation on (the default), the bad offset fails stf_setup on every
// rank; off, only on its owner (rank 0), and the others set up.
void setup_validation(Checker &ck, const char *how, const char *sf_options, bool on) {
  // INT_MAX: the index analysis must never see it (it computed offset + 1,
  // which overflowed; found by fuzz_graph).
  for (const stf_int bad_offset : {-1, 8, INT_MAX}) {
    const bool bad = bad_offset >= 0;
    ck.context(std::string("validate via ") + how + (bad ? ", bad root index " + std::to_string(bad_offset) : ", valid graph"));
    LocalGraph g = out_of_range_graph(bad_offset);
    stf_sf sf = nullptr;
    ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create");
    if (sf_options) ck.code(stf_set_sf_options(sf, sf_options), STF_SUCCESS, "stf_set_sf_options");
    ck.code(stf_set_graph(sf, g.nroots, g.nleaves(), nullptr, STF_COPY_VALUES, g.iremote.data(), STF_COPY_VALUES),
            STF_SUCCESS, "stf_set_graph (offsets are not checked here)");
    const int rc = stf_setup(sf);
    if (!bad) {
      ck.code(rc, STF_SUCCESS, "stf_setup with a valid graph");
    } else if (on || me == 0) {
      refused(ck, rc, STF_ERR_OFFSET, "stf_setup with a root index >= owner's nroots");
      const char *msg = stf_last_error_message();
      const std::string names = "root " + std::to_string(bad_offset) + " of rank 0";
      if (me == 0)
        ck.check(std::strstr(msg, names.c_str()) != nullptr, "owner's message does not name the root: %s", msg);
      ck.check(std::strstr(msg, "STF_ERR") == nullptr, "the message repeats the error name: %s", msg);
    } else {
      ck.code(rc, STF_SUCCESS, "stf_setup off the owner with -stf_validate 0");
    }
    ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
  }
}

void validation(Checker &ck) {
  const char *env = std::getenv("STF_VALIDATE");
  const bool env_off = env && std::strcmp(env, "0") == 0;
  // The environment is read before any option string, so test it first.
  setup_validation(ck, env_off ? "STF_VALIDATE=0" : "the default", nullptr, !env_off);
  setup_validation(ck, "stf_set_sf_options(-stf_validate 1)", "-stf_validate 1", true);
  setup_validation(ck, "stf_set_sf_options(-stf_validate 0)", "-stf_validate 0", false);
  ck.context("validate via stf_set_options");
  ck.code(stf_set_options("-stf_validate 0"), STF_SUCCESS, "stf_set_options(-stf_validate 0)");
  setup_validation(ck, "stf_set_options(-stf_validate 0)", nullptr, false);
  ck.code(stf_set_options("-stf_validate 1"), STF_SUCCESS, "stf_set_options(-stf_validate 1)");
  setup_validation(ck, "stf_set_options(-stf_validate 1)", nullptr, true);
}

// Compare stf_get_graph with what was set.
void expect_graph(Checker &ck, stf_sf sf, const LocalGraph &g, const stf_int *same_ilocal,
                  const stf_node *same_iremote) {
  stf_int nroots = -1, nleaves = -1;
  const stf_int *ilocal = nullptr;
  const stf_node *iremote = nullptr;
  if (!ck.code(stf_get_graph(sf, &nroots, &nleaves, &ilocal, &iremote), STF_SUCCESS, "stf_get_graph")) return;
  ck.check(nroots == g.nroots && nleaves == g.nleaves(), "counts %d/%d, expected %d/%d", nroots, nleaves,
           g.nroots, g.nleaves());
  // Without leaves either answer is fine (the library may drop an empty array).
  if (g.nleaves() > 0)
    ck.check((ilocal == nullptr) == g.contiguous, "ilocal %s, expected %s", ilocal ? "set" : "NULL",
             g.contiguous ? "NULL" : "set");
  if (nleaves != g.nleaves()) return;
  bool same = true;
  for (stf_int i = 0; i < nleaves; ++i) {
    if (ilocal && !g.contiguous && ilocal[i] != g.ilocal[i]) same = false;
    if (iremote[i].rank != g.iremote[i].rank || iremote[i].index != g.iremote[i].index) same = false;
  }
  ck.check(same, "stf_get_graph returned other leaves than were set");
  if (same_ilocal) ck.check(ilocal == same_ilocal, "STF_USE_POINTER: ilocal pointer not returned as given");
  if (same_iremote) ck.check(iremote == same_iremote, "STF_USE_POINTER: iremote pointer not returned as given");
  ck.code(stf_get_graph(sf, nullptr, nullptr, nullptr, nullptr), STF_SUCCESS, "stf_get_graph with NULL outputs");
}

void copy_modes(Checker &ck, const UnitSpec &ui, std::uint64_t seed) {
  LocalGraph g = random_graph(seed, 7, me, nranks);
  g.contiguous = false;  // explicit slots so ilocal's copy mode matters
  g.ilocal.resize(g.nleaves());
  for (stf_int i = 0; i < g.nleaves(); ++i) g.ilocal[i] = 2 * (g.nleaves() - i);
  GlobalGraph gg = gather_graph(g, MPI_COMM_WORLD);
  const stf_int n = g.nleaves();
  const std::size_t il_bytes = sizeof(stf_int) * (n + 1), ir_bytes = sizeof(stf_node) * (n + 1);
  const stf_copy_mode modes[] = {STF_COPY_VALUES, STF_OWN_POINTER, STF_USE_POINTER};
  const char *names[] = {"STF_COPY_VALUES", "STF_OWN_POINTER", "STF_USE_POINTER"};
  for (int m = 0; m < 3; ++m) {
    ck.context(std::string("copy mode ") + names[m]);
    stf_int *il = static_cast<stf_int *>(std::malloc(il_bytes));
    stf_node *ir = static_cast<stf_node *>(std::malloc(ir_bytes));
    if (n) std::memcpy(il, g.ilocal.data(), sizeof(stf_int) * n);
    if (n) std::memcpy(ir, g.iremote.data(), sizeof(stf_node) * n);
    stf_sf sf = nullptr;
    ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create");
    ck.code(stf_set_graph(sf, g.nroots, n, il, modes[m], ir, modes[m]), STF_SUCCESS, "stf_set_graph");
    if (modes[m] == STF_COPY_VALUES) {  // the caller may free right away
      std::memset(il, 0x5a, il_bytes);
      std::memset(ir, 0x5a, ir_bytes);
      std::free(il);
      std::free(ir);
    }
    const bool borrowed = modes[m] == STF_USE_POINTER;
    expect_graph(ck, sf, g, borrowed && n ? il : nullptr, borrowed && n ? ir : nullptr);
    run_bcast(ck, sf, DataGen{&gg, &ui, MPI_REPLACE, hash_key(seed, m)}, me, Form::Blocking);
    ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
    if (borrowed) {
      std::free(il);
      std::free(ir);
    }
  }
  // Mixed: copied ilocal, borrowed iremote; and contiguous leaves.
  ck.context("copy modes mixed / contiguous");
  stf_sf sf = nullptr;
  ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create");
  ck.code(stf_set_graph(sf, g.nroots, n, g.ilocal.data(), STF_COPY_VALUES, g.iremote.data(), STF_USE_POINTER),
          STF_SUCCESS, "stf_set_graph mixed modes");
  expect_graph(ck, sf, g, nullptr, n ? g.iremote.data() : nullptr);
  ck.code(stf_reset(sf), STF_SUCCESS, "stf_reset");
  LocalGraph c = g;
  c.contiguous = true;
  c.ilocal.clear();
  ck.code(stf_set_graph(sf, c.nroots, n, nullptr, STF_COPY_VALUES, c.iremote.data(), STF_COPY_VALUES),
          STF_SUCCESS, "stf_set_graph contiguous");
  expect_graph(ck, sf, c, nullptr, nullptr);
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
}

// reset + new graph; set_graph over an existing graph; duplicate.
void lifecycle(Checker &ck, const UnitSpec &ui, std::uint64_t seed) {
  LocalGraph a = ring_graph(me, nranks, 3), b = random_graph(seed, 3, me, nranks);
  GlobalGraph ga = gather_graph(a, MPI_COMM_WORLD), gb = gather_graph(b, MPI_COMM_WORLD);

  ck.context("create/destroy");
  stf_sf sf = nullptr;
  ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create");
  ck.check(sf != nullptr, "stf_create gave NULL");
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
  ck.check(sf == nullptr, "stf_destroy did not set the handle to NULL");

  ck.context("reset and new graph");
  sf = make_sf(ck, a, MPI_COMM_WORLD, nullptr, STF_COPY_VALUES);
  if (!sf) return;
  run_bcast(ck, sf, DataGen{&ga, &ui, MPI_REPLACE, 1}, me, Form::Blocking);
  check_multi_sf(ck, sf, ga, me, ui, 11);  // a multi-SF exists when reset comes
  ck.code(stf_reset(sf), STF_SUCCESS, "stf_reset");
  refused(ck, stf_get_graph(sf, nullptr, nullptr, nullptr, nullptr), STF_ERR_STATE, "stf_get_graph after reset");
  ck.code(stf_set_graph(sf, b.nroots, b.nleaves(), b.ilocal_ptr(), STF_COPY_VALUES, b.iremote.data(), STF_COPY_VALUES),
          STF_SUCCESS, "stf_set_graph after reset");
  expect_graph(ck, sf, b, nullptr, nullptr);
  run_bcast(ck, sf, DataGen{&gb, &ui, MPI_SUM, 2}, me, Form::Split);  // implicit setup
  run_degree(ck, sf, gb, me, Form::Blocking);
  check_multi_sf(ck, sf, gb, me, ui, 12);  // rebuilt for the new graph

  // Setting a graph over an existing one may replace it or be refused.
  ck.context("set_graph over a graph");
  int rc = stf_set_graph(sf, a.nroots, a.nleaves(), a.ilocal_ptr(), STF_COPY_VALUES, a.iremote.data(), STF_COPY_VALUES);
  ck.code_either(rc, STF_SUCCESS, STF_ERR_STATE, "second stf_set_graph");
  int all_ok = 0, ok = rc == STF_SUCCESS;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (all_ok) {
    expect_graph(ck, sf, a, nullptr, nullptr);
    run_bcast(ck, sf, DataGen{&ga, &ui, MPI_MAX, 3}, me, Form::Blocking);
    run_degree(ck, sf, ga, me, Form::Split);
  }
  const LocalGraph &now = all_ok ? a : b;
  const GlobalGraph &gnow = all_ok ? ga : gb;

  ck.context("duplicate config");
  stf_sf cfg = nullptr, cpy = nullptr;
  ck.code(stf_duplicate(sf, STF_DUPLICATE_CONFIG, &cfg), STF_SUCCESS, "stf_duplicate(CONFIG)");
  refused(ck, stf_get_graph(cfg, nullptr, nullptr, nullptr, nullptr), STF_ERR_STATE, "stf_get_graph on CONFIG copy");
  ck.code(stf_destroy(&cfg), STF_SUCCESS, "stf_destroy");

  ck.context("duplicate graph, original destroyed");
  ck.code(stf_duplicate(sf, STF_DUPLICATE_GRAPH, &cpy), STF_SUCCESS, "stf_duplicate(GRAPH)");
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy original");
  expect_graph(ck, cpy, now, nullptr, nullptr);
  ck.code(stf_setup(cpy), STF_SUCCESS, "stf_setup on the copy");
  run_bcast(ck, cpy, DataGen{&gnow, &ui, MPI_SUM, 4}, me, Form::Split);
  run_reduce(ck, cpy, DataGen{&gnow, &ui, MPI_SUM, 5}, me, Form::Blocking);
  ck.code(stf_destroy(&cpy), STF_SUCCESS, "stf_destroy copy");

  // Options travel with a CONFIG duplicate: validation stays on.
  ck.context("duplicate config keeps options");
  stf_sf withopt = nullptr, dup = nullptr;
  ck.code(stf_create(MPI_COMM_WORLD, &withopt), STF_SUCCESS, "stf_create");
  ck.code(stf_set_sf_options(withopt, "-stf_validate 1"), STF_SUCCESS, "stf_set_sf_options");
  ck.code(stf_duplicate(withopt, STF_DUPLICATE_CONFIG, &dup), STF_SUCCESS, "stf_duplicate(CONFIG)");
  LocalGraph bad = out_of_range_graph(8);
  ck.code(stf_set_graph(dup, bad.nroots, bad.nleaves(), nullptr, STF_COPY_VALUES, bad.iremote.data(), STF_COPY_VALUES),
          STF_SUCCESS, "stf_set_graph");
  refused(ck, stf_setup(dup), STF_ERR_OFFSET, "stf_setup on CONFIG copy with bad root index");
  ck.code(stf_destroy(&dup), STF_SUCCESS, "stf_destroy");
  ck.code(stf_destroy(&withopt), STF_SUCCESS, "stf_destroy");
}

// Read back what stf_view wrote to a temporary file.
std::string view_to_string(Checker &ck, stf_sf sf, int *rc) {
  FILE *f = std::tmpfile();
  if (!ck.check(f != nullptr, "tmpfile() failed")) return "";
  *rc = stf_view(sf, f);
  std::fflush(f);
  std::rewind(f);
  std::string s;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  std::fclose(f);
  return s;
}

void view(Checker &ck) {
  ck.context("stf_view without graph");
  stf_sf sf = nullptr;
  ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create");
  int rc = -1;
  std::string s = view_to_string(ck, sf, &rc);
  ck.code_either(rc, STF_SUCCESS, STF_ERR_STATE, "stf_view without graph");
  if (rc == STF_SUCCESS && me == 0)
    ck.check(s.find("no graph") != std::string::npos, "stf_view without graph printed \"%s\"", s.c_str());

  ck.context("stf_view");
  // Distinctive counts that must show up: 37 roots, 23 leaves per rank, all
  // pointing at the next rank.
  LocalGraph g;
  g.nroots = 37;
  for (int k = 0; k < 23; ++k) g.iremote.push_back({(me + 1) % nranks, k});
  ck.code(stf_set_graph(sf, g.nroots, g.nleaves(), nullptr, STF_COPY_VALUES, g.iremote.data(), STF_COPY_VALUES),
          STF_SUCCESS, "stf_set_graph");
  ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup");
  s = view_to_string(ck, sf, &rc);
  ck.code(rc, STF_SUCCESS, "stf_view");
  if (me == 0) {
    bool ok = !s.empty() && s.find("37") != std::string::npos && s.find("23") != std::string::npos;
    for (int p = 0; p < nranks; ++p) ok = ok && s.find(std::to_string(p)) != std::string::npos;
    ck.check(ok, "stf_view output lacks the counts 37/23 or a rank number: \"%.300s\"", s.c_str());
  } else {
    ck.check(s.empty(), "stf_view wrote on rank %d (only rank 0 writes): \"%.200s\"", me, s.c_str());
  }
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  Checker ck("test_validation", argc, argv, 20240613);
  const std::uint64_t seed = ck.seed();
  std::vector<UnitSpec> units = make_units();
  const UnitSpec &ui = units[0];  // MPI_INT

  validation(ck);  // first: it depends on the environment defaults
  error_names(ck);
  options(ck);
  graph_rules(ck);
  copy_modes(ck, ui, seed);
  lifecycle(ck, ui, seed);
  view(ck);

  free_units(units);
  int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
