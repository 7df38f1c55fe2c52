// Failures that must leave the program in control: allocation failures
// come back as STF_ERR_MEMORY (no exception crosses the C API; set-up's
// agreed on every rank when one rank runs out), leaf slots and matrix sizes
// that overflow stf_int are refused, a stale copy of an ended request is
// refused, the graph algebra on a bad graph fails on every rank, -stf_debug 1
// makes an argument error of one rank's begin an error on every rank, a
// destroyed SF's handle is refused, and stf_csr_create agrees on its input.
// A failed operation leaves its SF usable (a node-aware one too):
// robust_failed_ops.cpp.
#include <sys/resource.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "check.h"
#include "ring_case.h"
#include "robust_parts.h"
#include "stf_apps.h"

using namespace stft;

namespace {

int me = 0, nranks = 1;

// ---- allocation failures ---------------------------------------------------

#if defined(__SANITIZE_ADDRESS__)
#define STF_NO_RLIMIT 1  // the sanitizer's shadow memory does not live with an address-space limit
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STF_NO_RLIMIT 1
#endif
#endif

long vm_bytes() {
  FILE *f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kb = -1;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "VmSize: %ld kB", &kb) == 1) break;
  std::fclose(f);
  return kb < 0 ? -1 : kb * 1024;
}

// While alive, this process may grow by `room` bytes of address space only.
struct AddressLimit {
  rlimit old{};
  bool on = false;
  explicit AddressLimit(long room) {
    const long now = vm_bytes();
    if (now < 0 || getrlimit(RLIMIT_AS, &old)) return;
    rlimit tight = old;
    tight.rlim_cur = static_cast<rlim_t>(now + room);
    on = setrlimit(RLIMIT_AS, &tight) == 0;
  }
  ~AddressLimit() {
    if (on) setrlimit(RLIMIT_AS, &old);
  }
};

void out_of_memory(Checker &ck) {
#ifdef STF_NO_RLIMIT
  if (me == 0) std::printf("test_robust: allocation failures skipped under AddressSanitizer\n");
  (void)ck;
#else
  // Set-up of 8M self edges in reverse order needs far more than 16 MiB.
  ck.context("stf_setup out of memory");
  const stf_int n = 1 << 23;
  std::vector<stf_node> remote(n);
  for (stf_int i = 0; i < n; i++) remote[i] = {me, n - 1 - i};
  stf_sf big = nullptr;
  ck.code(stf_create(MPI_COMM_WORLD, &big), STF_SUCCESS, "stf_create");
  ck.code(stf_set_graph(big, n, n, nullptr, STF_COPY_VALUES, remote.data(), STF_USE_POINTER), STF_SUCCESS,
          "stf_set_graph");
  int rc = STF_SUCCESS;
  {
    AddressLimit limit(16 << 20);
    ck.check(limit.on, "could not limit the address space");
    rc = stf_setup(big);
  }
  if (ck.code(rc, STF_ERR_MEMORY, "stf_setup under a 16 MiB address-space margin")) ck.has_message("stf_setup");
  ck.code(stf_setup(big), STF_SUCCESS, "stf_setup with memory again");
  ck.code(stf_destroy(&big), STF_SUCCESS, "stf_destroy");

  // Rank 0 alone runs out: with -stf_validate on (the default) every rank
  // fails, instead of the others going on to wait for rank 0.
  ck.context("stf_setup out of memory on rank 0 only");
  ck.code(stf_create(MPI_COMM_WORLD, &big), STF_SUCCESS, "stf_create");
  ck.code(stf_set_graph(big, n, n, nullptr, STF_COPY_VALUES, remote.data(), STF_USE_POINTER), STF_SUCCESS,
          "stf_set_graph");
  {
    AddressLimit limit(me == 0 ? 16 << 20 : 1L << 40);
    rc = stf_setup(big);
  }
  if (ck.code(rc, STF_ERR_MEMORY, "stf_setup, rank 0 under a 16 MiB address-space margin")) {
    const char *says = me == 0 ? "out of memory" : "rank 0 failed";
    ck.check(std::strstr(stf_last_error_message(), says) != nullptr, "the message does not say \"%s\": %s", says,
             stf_last_error_message());
  }
  ck.code(stf_setup(big), STF_SUCCESS, "stf_setup with memory again");
  ck.code(stf_destroy(&big), STF_SUCCESS, "stf_destroy");

  // The first bcast with an op allocates its pack buffers (1M units each way).
  if (nranks < 2) return;
  ck.context("stf_bcast out of memory");
  const stf_int m = 1 << 20;
  stf_sf sf = ring_sf(ck, m);
  ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup");
  std::vector<double> roots(m, 1.0), leaves(m, 0.0);
  {
    AddressLimit limit(1 << 20);
    rc = stf_bcast(sf, MPI_DOUBLE, roots.data(), leaves.data(), MPI_SUM);
  }
  if (ck.code(rc, STF_ERR_MEMORY, "stf_bcast under a 1 MiB address-space margin")) ck.has_message("stf_bcast");
  check_ring_works(ck, sf, m);
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
#endif
}

// ---- sizes that overflow stf_int -------------------------------------------

void leaf_slot_int_max(Checker &ck) {
  ck.context("leaf slot INT_MAX");
  stf_sf sf = nullptr;
  ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create");
  const stf_node root = {me, 0};
  stf_int slot = INT_MAX;
  if (ck.code(stf_set_graph(sf, 1, 1, &slot, STF_COPY_VALUES, &root, STF_COPY_VALUES), STF_ERR_ARG,
              "stf_set_graph with leaf slot INT_MAX"))
    ck.has_message("stf_set_graph");
  // Refused, the SF has no graph: every call that sizes leaf buffers says so.
  stf_sf out = nullptr;
  stf_int nout = 0, sel = 0;
  ck.code(stf_create_inverse(sf, &out), STF_ERR_STATE, "stf_create_inverse");
  ck.code(stf_merge(sf, sf, &out), STF_ERR_STATE, "stf_merge");
  ck.code(stf_concatenate(1, &sf, nullptr, STF_CONCAT_ROOTS_LOCAL, &out), STF_ERR_STATE, "stf_concatenate");
  ck.code(stf_create_embedded_leaves(sf, 1, &sel, &out), STF_ERR_STATE, "stf_create_embedded_leaves");
  stf_int count = 1, offset = 0, lc[1], lo[1];
  ck.code(stf_distribute_section(sf, &count, &offset, lc, lo, &nout, &out), STF_ERR_STATE, "stf_distribute_section");
  ck.check(out == nullptr, "an output was created");
  // One below is a valid slot.
  slot = INT_MAX - 1;
  ck.code(stf_set_graph(sf, 1, 1, &slot, STF_COPY_VALUES, &root, STF_COPY_VALUES), STF_SUCCESS,
          "stf_set_graph with leaf slot INT_MAX - 1");
  stf_int minleaf = 0, maxleaf = 0;
  ck.code(stf_get_leaf_range(sf, &minleaf, &maxleaf), STF_SUCCESS, "stf_get_leaf_range");
  ck.check(minleaf == INT_MAX - 1 && maxleaf == INT_MAX - 1, "leaf range %d..%d", minleaf, maxleaf);
  // Concatenated at offset 2, that leaf would be slot INT_MAX + 1: refused
  // naming the offset (it was narrowed first, and named as a negative slot).
  const stf_int two = 2;
  if (ck.code(stf_concatenate(1, &sf, &two, STF_CONCAT_ROOTS_LOCAL, &out), STF_ERR_ARG,
              "stf_concatenate past INT_MAX"))
    ck.check(std::strstr(stf_last_error_message(), "offset 2") != nullptr, "message: %s", stf_last_error_message());
  ck.check(out == nullptr, "stf_concatenate past INT_MAX created an SF");
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");

  // A unit above INT_MAX bytes: MPI_Type_size says MPI_UNDEFINED; the error
  // names its size (it used to say "size 0"). No memory is touched.
  ck.context("a unit of 3 GiB");
  MPI_Datatype big = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(3 << 20, MPI_CHAR, &big);
  MPI_Datatype huge = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(1 << 10, big, &huge);
  MPI_Type_commit(&huge);
  ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create");
  ck.code(stf_set_graph(sf, 0, 0, nullptr, STF_COPY_VALUES, nullptr, STF_COPY_VALUES), STF_SUCCESS, "empty graph");
  if (ck.code(stf_bcast(sf, huge, nullptr, nullptr, MPI_REPLACE), STF_ERR_TYPE, "stf_bcast of a 3 GiB unit"))
    ck.check(std::strstr(stf_last_error_message(), "3221225472 bytes") != nullptr, "the message does not name the "
             "size: %s", stf_last_error_message());
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
  MPI_Type_free(&huge);
  MPI_Type_free(&big);

  ck.context("stf_csr_create with INT_MAX rows");
  stf_coo coo = {INT_MAX, INT_MAX, 0, nullptr, nullptr, nullptr};
  stf_csr A = nullptr;
  if (ck.code(stf_csr_create(MPI_COMM_WORLD, &coo, STF_PARTITION_ROWS, &A), STF_ERR_ARG, "stf_csr_create"))
    ck.has_message("stf_csr_create");
  ck.check(A == nullptr, "a matrix was created");
}

// ---- stf_csr_create agrees on its input ------------------------------------

// Every rank must pass the same matrix: a value changed on one rank, an
// index out of range or a NULL matrix on one rank, or different partitions,
// fail on every rank (they built a wrong matrix, or hung the others).
void csr_input(Checker &ck) {
  ck.context("stf_csr_create input");
  const int64_t n = 12;
  std::vector<int64_t> row, col;
  std::vector<double> val;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = std::max<int64_t>(0, i - 1); j <= std::min<int64_t>(n - 1, i + 1); j++) {
      row.push_back(i);
      col.push_back(j);
      val.push_back(i == j ? 2.0 : -1.0);
    }
  stf_coo good = {n, n, static_cast<int64_t>(val.size()), row.data(), col.data(), val.data()};
  const int last = nranks - 1;
  std::vector<double> val2 = val;
  val2[5] += me == last ? 1e-12 : 0.0;
  std::vector<int64_t> col2 = col;
  if (me == last) col2[3] = n;
  stf_coo changed = good, out_of_range = good;
  changed.val = val2.data();
  out_of_range.col = col2.data();
  stf_csr A = nullptr;
  if (nranks > 1) {
    if (ck.code(stf_csr_create(MPI_COMM_WORLD, &changed, STF_PARTITION_ROWS, &A), STF_ERR_ARG,
                "one value differs on the last rank"))
      ck.has_message("different matrices");
    ck.code(stf_csr_create(MPI_COMM_WORLD, &good, me == last ? STF_PARTITION_NNZ : STF_PARTITION_ROWS, &A),
            STF_ERR_ARG, "the last rank asks for another partition");
  }
  ck.code(stf_csr_create(MPI_COMM_WORLD, &out_of_range, STF_PARTITION_ROWS, &A), STF_ERR_ARG,
          "an index out of range on the last rank");
  ck.code(stf_csr_create(MPI_COMM_WORLD, me == last ? nullptr : &good, STF_PARTITION_ROWS, &A),
          STF_ERR_NULL, "a NULL matrix on the last rank (its code on every rank)");
  ck.check(A == nullptr, "a matrix was created from bad input");
  if (ck.code(stf_csr_create(MPI_COMM_WORLD, &good, STF_PARTITION_NNZ, &A), STF_SUCCESS, "the same matrix"))
    stf_csr_destroy(&A);
}

// ---- stale request handles --------------------------------------------------

void stale_request(Checker &ck) {
  ck.context("stale request");
  const stf_int n = 3;
  stf_sf sf = ring_sf(ck, n);
  const int next = (me + 1) % nranks;
  std::vector<int> roots(n), leaves(n, -1);
  for (stf_int i = 0; i < n; i++) roots[i] = 100 * me + i;
  stf_request req = nullptr;
  ck.code(stf_bcast_begin(sf, MPI_INT, roots.data(), leaves.data(), MPI_REPLACE, &req), STF_SUCCESS, "begin 1");
  stf_request stale = req;
  ck.code(stf_bcast_end(sf, &req), STF_SUCCESS, "end 1");
  for (stf_int i = 0; i < n; i++) roots[i] = 100 * me + i + 7;
  ck.code(stf_bcast_begin(sf, MPI_INT, roots.data(), leaves.data(), MPI_REPLACE, &req), STF_SUCCESS,
          "begin 2 (reusing the slot)");
  if (ck.code(stf_bcast_end(sf, &stale), STF_ERR_REQUEST, "end with a stale copy of request 1"))
    ck.has_message("stale end");
  int done = 0;
  ck.code(stf_test(sf, &stale, &done), STF_ERR_REQUEST, "stf_test with the stale copy");
  ck.code(stf_bcast_end(sf, &req), STF_SUCCESS, "end 2 with its own request");
  int wrong = 0;
  for (stf_int i = 0; i < n; i++) wrong += leaves[i] != 100 * next + i + 7;
  ck.check(wrong == 0, "operation 2: %d wrong leaves", wrong);
  ck.code(stf_bcast_end(sf, &req), STF_ERR_REQUEST, "end 2 again");
  // The handle carries more of the generation than the 8 bits the slot's
  // alignment leaves: a copy 256 uses old is still stale (where the top byte
  // of a pointer is free: always on x86-64, not where an allocator tags it).
  ck.code(stf_bcast_begin(sf, MPI_INT, roots.data(), leaves.data(), MPI_REPLACE, &req), STF_SUCCESS, "begin 3");
  stale = req;
  ck.code(stf_bcast_end(sf, &req), STF_SUCCESS, "end 3");
  for (int k = 0; k < 255; k++) {
    ck.code(stf_bcast_begin(sf, MPI_INT, roots.data(), leaves.data(), MPI_REPLACE, &req), STF_SUCCESS, "begin");
    ck.code(stf_bcast_end(sf, &req), STF_SUCCESS, "end");
  }
  ck.code(stf_bcast_begin(sf, MPI_INT, roots.data(), leaves.data(), MPI_REPLACE, &req), STF_SUCCESS,
          "begin 259 (the slot's 256th reuse since begin 3)");
  bool wide = sizeof(void *) == 8 && reinterpret_cast<std::uintptr_t>(req) >> 56 != 0;
#if defined(__x86_64__)
  wide = true;
#endif
  if (wide) ck.code(stf_bcast_end(sf, &stale), STF_ERR_REQUEST, "end with a copy of request 3, 256 uses old");
  ck.code(stf_bcast_end(sf, &req), STF_SUCCESS, "end 259");
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
}

// ---- the algebra on a bad root offset ----------------------------------------

// Rank 0's leaf 1 reads root n + 5 of rank 1, which owns n: every algebra
// call fails on every rank, also where -stf_validate 0 would let set-up fail
// on rank 1 alone.
void algebra_bad_offset(Checker &ck) {
  if (nranks < 2) return;
  const stf_int n = 2;
  using Call = int (*)(stf_sf, stf_sf, stf_sf *);
  const struct {
    const char *name;
    Call call;
  } calls[] = {
      {"stf_create_inverse", [](stf_sf sf, stf_sf, stf_sf *out) { return stf_create_inverse(sf, out); }},
      {"stf_compose(bad, good)", [](stf_sf sf, stf_sf good, stf_sf *out) { return stf_compose(sf, good, out); }},
      {"stf_compose(good, bad)", [](stf_sf sf, stf_sf good, stf_sf *out) { return stf_compose(good, sf, out); }},
      {"stf_compose_inverse", [](stf_sf sf, stf_sf good, stf_sf *out) { return stf_compose_inverse(sf, good, out); }},
      {"stf_create_embedded_roots",
       [](stf_sf sf, stf_sf, stf_sf *out) {
         const stf_int sel = 0;
         return stf_create_embedded_roots(sf, 1, &sel, out);
       }},
      {"stf_create_embedded_leaves",
       [](stf_sf sf, stf_sf, stf_sf *out) {
         const stf_int sel = 0;
         return stf_create_embedded_leaves(sf, 1, &sel, out);
       }},
      {"stf_create_strided", [](stf_sf sf, stf_sf, stf_sf *out) { return stf_create_strided(sf, 2, -1, -1, out); }},
      {"stf_concatenate",
       [](stf_sf sf, stf_sf good, stf_sf *out) {
         const stf_sf both[2] = {good, sf};
         return stf_concatenate(2, both, nullptr, STF_CONCAT_ROOTS_LOCAL, out);
       }},
      {"stf_distribute_section",
       [](stf_sf sf, stf_sf, stf_sf *out) {
         const stf_int count[2] = {1, 1}, offset[2] = {0, 1};
         stf_int leaf_count[2], leaf_offset[2];
         return stf_distribute_section(sf, count, offset, leaf_count, leaf_offset, nullptr, out);
       }},
  };
  for (const char *options : {"-stf_validate 1", "-stf_validate 0"}) {
    for (const auto &c : calls) {
      ck.context(std::string(c.name) + " on a root offset past its owner's nroots, " + options);
      // good: every rank has n roots and n leaves reading its own roots.
      std::vector<stf_node> own(n);
      for (stf_int i = 0; i < n; i++) own[i] = {me, i};
      stf_sf good = nullptr, bad = ring_sf(ck, n, options);
      ck.code(stf_create(MPI_COMM_WORLD, &good), STF_SUCCESS, "stf_create");
      ck.code(stf_set_graph(good, n, n, nullptr, STF_COPY_VALUES, own.data(), STF_COPY_VALUES), STF_SUCCESS,
              "good graph");
      if (me == 0) {
        std::vector<stf_node> remote(n);
        for (stf_int i = 0; i < n; i++) remote[i] = {1, i};
        remote[1].index = n + 5;
        ck.code(stf_set_graph(bad, n, n, nullptr, STF_COPY_VALUES, remote.data(), STF_COPY_VALUES), STF_SUCCESS,
                "bad graph");
      }
      stf_sf out = nullptr;
      const int rc = c.call(bad, good, &out);
      ck.check(rc != STF_SUCCESS, "%s succeeded", c.name);
      ck.check(out == nullptr, "%s created an output", c.name);
      if (rc) ck.has_message(c.name);
      if (out) stf_destroy(&out);
      ck.code(stf_destroy(&bad), STF_SUCCESS, "stf_destroy");
      ck.code(stf_destroy(&good), STF_SUCCESS, "stf_destroy");
    }
  }
}

// ---- -stf_debug 1 -------------------------------------------------------------

void debug_option(Checker &ck) {
  if (nranks < 2) return;
  const stf_int n = 3;
  ck.context("-stf_debug 1, NULL root data on rank 0");
  stf_sf sf = ring_sf(ck, n);
  if (!ck.code(stf_set_sf_options(sf, "-stf_debug 1"), STF_SUCCESS, "-stf_debug 1")) {
    stf_destroy(&sf);
    return;  // without the option rank 0 would fail alone and the others wait
  }
  std::vector<int> roots(n, 1), leaves(n, 0);
  stf_request req = nullptr;
  const int rc = stf_bcast_begin(sf, MPI_INT, me == 0 ? nullptr : roots.data(), leaves.data(), MPI_REPLACE, &req);
  if (ck.code(rc, STF_ERR_NULL, "bcast_begin, agreed")) ck.has_message("bcast_begin");
  ck.check(req == nullptr, "a failed begin left a request");
  ck.context("-stf_debug 1, a prepared reduce with NULL root data on rank 0");
  const int rc_init = stf_reduce_init(sf, MPI_INT, leaves.data(), me == 0 ? nullptr : roots.data(), MPI_SUM, &req);
  if (ck.code(rc_init, STF_ERR_NULL, "reduce_init, agreed") && me != 0)
    ck.check(std::strstr(stf_last_error_message(), "reduce_init: rank 0 failed") != nullptr,
             "the others' error names the call: %s", stf_last_error_message());
  ck.check(req == nullptr, "a failed init left a request");
  ck.context("-stf_debug 1, MPI_SUM on MPI_2INT on the last rank");
  const int rc_op = stf_reduce(sf, me == nranks - 1 ? MPI_2INT : MPI_INT, leaves.data(), roots.data(), MPI_SUM);
  ck.code_either(rc_op, STF_ERR_OP, STF_ERR_TYPE, "reduce, agreed");
  ck.context("-stf_debug 1, correct operations afterwards");
  check_ring_works(ck, sf, n);
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");

  // Units of different sizes: refused on every rank before anything moves,
  // also on the one-sided transports, where the longer messages would be
  // written past the receiver's buffer.
  for (const char *type : {"basic", "neighbor", "collective", "window", "putsignal"}) {
    ck.context(std::string("-stf_debug 1, MPI_INT on rank 0 against MPI_DOUBLE, ") + type);
    sf = ring_sf(ck, n, (std::string("-stf_debug 1 -stf_type ") + type).c_str());
    std::vector<double> droots(n, 1.0), dleaves(n, 0.0);
    const MPI_Datatype unit = me == 0 ? MPI_INT : MPI_DOUBLE;
    if (ck.code(stf_bcast(sf, unit, droots.data(), dleaves.data(), MPI_REPLACE), STF_ERR_ARG, "bcast, agreed") &&
        me != 0)
      ck.has_message("units differ");
    ck.code(stf_reduce(sf, unit, dleaves.data(), droots.data(), MPI_SUM), STF_ERR_ARG, "reduce, agreed");
    check_ring_works(ck, sf, n);
    ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
  }

  // Different ops on different ranks: refused on every rank (collective
  // waited in another collective; basic combined with each rank's own op).
  for (const char *type : {"basic", "collective", "allgather"}) {
    ck.context(std::string("-stf_debug 1, MPI_MAX on rank 0 against MPI_SUM, ") + type);
    sf = ring_sf(ck, n, (std::string("-stf_debug 1 -stf_type ") + type).c_str());
    std::vector<int> iroots(n, 1), ileaves(n, 0);
    const MPI_Op op = me == 0 ? MPI_MAX : MPI_SUM;
    if (ck.code(stf_reduce(sf, MPI_INT, ileaves.data(), iroots.data(), op), STF_ERR_OP, "reduce, agreed"))
      ck.has_message("different ops");
    ck.code(stf_bcast(sf, MPI_INT, iroots.data(), ileaves.data(), op), STF_ERR_OP, "bcast, agreed");
    check_ring_works(ck, sf, n);
    ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
  }
}

// ---- handles used after stf_destroy -------------------------------------------

// A copy of a destroyed SF's handle, and a destroyed multi-SF, are errors on
// the calls that use them (they were heap-use-after-free).
void after_destroy(Checker &ck) {
  ck.context("after destroy");
  const stf_int n = 4;
  stf_sf sf = ring_sf(ck, n);
  std::vector<int> roots(n, me), leaves(n, -1);
  stf_request req = nullptr;
  ck.code(stf_bcast_begin(sf, MPI_INT, roots.data(), leaves.data(), MPI_REPLACE, &req), STF_SUCCESS, "begin");
  ck.code(stf_bcast_end(sf, &req), STF_SUCCESS, "end");
  stf_sf copy = sf;
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
  ck.check(sf == nullptr, "stf_destroy sets the handle to NULL");
  if (ck.code(stf_bcast(copy, MPI_INT, roots.data(), leaves.data(), MPI_REPLACE), STF_ERR_STATE,
              "stf_bcast on a destroyed SF"))
    ck.has_message("destroyed");
  ck.code(stf_bcast_end(copy, &req), STF_ERR_STATE, "stf_bcast_end on a destroyed SF");
  ck.code(stf_setup(copy), STF_ERR_STATE, "stf_setup on a destroyed SF");
  ck.code(stf_view(copy, nullptr), STF_ERR_STATE, "stf_view on a destroyed SF");
  stf_sf out = nullptr;
  ck.code(stf_create_inverse(copy, &out), STF_ERR_STATE, "stf_create_inverse of a destroyed SF");
  ck.code(stf_destroy(&copy), STF_ERR_STATE, "stf_destroy twice");

  // The multi-SF belongs to its SF: destroying it is refused, and the SF's
  // gather still works afterwards.
  sf = ring_sf(ck, n);
  stf_sf multi = nullptr;
  ck.code(stf_get_multi_sf(sf, &multi), STF_SUCCESS, "stf_get_multi_sf");
  if (ck.code(stf_destroy(&multi), STF_ERR_ARG, "stf_destroy of the borrowed multi-SF"))
    ck.has_message("multi-SF");
  ck.check(multi != nullptr, "a refused stf_destroy leaves the handle");
  std::vector<int> gathered(n, -1);
  for (stf_int i = 0; i < n; i++) leaves[i] = 10 * me + i;
  ck.code(stf_gather(sf, MPI_INT, leaves.data(), gathered.data()), STF_SUCCESS, "gather afterwards");
  const int prev = (me + nranks - 1) % nranks;
  int wrong = 0;
  for (stf_int i = 0; i < n; i++) wrong += gathered[i] != 10 * prev + i;
  ck.check(wrong == 0, "gather afterwards: %d wrong slots", wrong);
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
  ck.code(stf_gather(multi, MPI_INT, leaves.data(), gathered.data()), STF_ERR_STATE,
          "the multi-SF after its SF was destroyed");
}

// ---- intercommunicators ------------------------------------------------------

// An SF on an intercommunicator used to be accepted, then read from the
// wrong processes (ranks name the remote group there): refused.
void intercommunicator(Checker &ck) {
  ck.context("stf_create on an intercommunicator");
  if (nranks < 2) return;
  MPI_Comm half = MPI_COMM_NULL, inter = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
  // The other group's leader, in MPI_COMM_WORLD: rank 1 for the evens, 0 for the odds.
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, me % 2 ? 0 : 1, 77, &inter);
  stf_sf sf = nullptr;
  if (ck.code(stf_create(inter, &sf), STF_ERR_ARG, "stf_create"))
    ck.check(std::strstr(stf_last_error_message(), "intercommunicator") != nullptr,
             "the message does not name the intercommunicator: %s", stf_last_error_message());
  ck.check(sf == nullptr, "a refused stf_create leaves the handle NULL");
  if (sf) stf_destroy(&sf);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  int rc = 0;
  {
    Checker ck("test_robust", argc, argv, 1);
    // STF_ROBUST_ONLY=name runs one part (each used to abort or hang the job).
    const char *only = std::getenv("STF_ROBUST_ONLY");
    const struct {
      const char *name;
      void (*run)(Checker &);
    } parts[] = {{"int_max", leaf_slot_int_max},     {"stale", stale_request},  {"failed", failed_operation},
                 {"misrouted", misrouted_message}, {"failed_step", failed_step},
                 {"algebra", algebra_bad_offset}, {"debug", debug_option}, {"memory", out_of_memory},
                 {"destroyed", after_destroy}, {"csr_input", csr_input}, {"intercomm", intercommunicator}};
    for (const auto &p : parts)
      if (!only || std::strcmp(only, p.name) == 0) p.run(ck);
    rc = ck.finish();
  }
  MPI_Finalize();
  return rc;
}
