// stf_create_from_matching_indices: 64-bit ids owned in any order by any
// rank (some ranks own none, some ids negative or beyond 2^32), needed with
// repeats; bcast brings each needed id's value, reduce counts the needers.
// Errors are agreed and name the id: needed but unowned, owned twice; bad
// arguments.
#include <cstring>
#include <string>
#include <vector>

#include "check.h"
#include "graphs.h"

using namespace stft;

namespace {

int me = 0, nranks = 1;

// Id number k of a case: spread out, some beyond 32 bits, some negative.
stf_gint id_of(long long k) { return (k % 5 == 3 ? -1 : 1) * (k * 4294967311LL + 17); }
double value_of(stf_gint id) { return static_cast<double>(id % 1000003) + 0.5; }

struct Case {
  std::vector<stf_gint> owned, needed;
};

// Ids 0..n-1 go to random owners (the stream all ranks share), shuffled per
// rank; each rank needs `needs` random ids, repeats allowed. Rank 0 may own
// nothing (empty) to cover empty ranks.
Case make_case(std::uint64_t seed, long long n, int needs, bool rank0_empty) {
  Case c;
  Rng shared(hash_key(seed, 1));
  std::vector<stf_gint> all;
  for (long long k = 0; k < n; ++k) {
    int owner = static_cast<int>(shared.below(nranks));
    if (rank0_empty && owner == 0 && nranks > 1) owner = 1;
    all.push_back(id_of(k));
    if (owner == me) c.owned.push_back(id_of(k));
  }
  Rng mine(hash_key(seed, 2, me));
  for (std::size_t i = c.owned.size(); i > 1; --i) std::swap(c.owned[i - 1], c.owned[mine.below(i)]);
  for (int i = 0; i < needs && n > 0; ++i) c.needed.push_back(all[mine.below(n)]);
  return c;
}

void data(Checker &ck, const Case &c, const std::string &name) {
  ck.context(name);
  stf_sf sf = nullptr;
  const stf_int no = static_cast<stf_int>(c.owned.size()), nn = static_cast<stf_int>(c.needed.size());
  if (!ck.code(stf_create_from_matching_indices(MPI_COMM_WORLD, no, c.owned.data(), nn, c.needed.data(), &sf),
               STF_SUCCESS, "stf_create_from_matching_indices"))
    return;
  std::vector<double> roots(no), ghosts(nn, -1.0), counts(no, 0.0), ones(nn, 1.0);
  for (stf_int i = 0; i < no; ++i) roots[i] = value_of(c.owned[i]);
  ck.code(stf_bcast(sf, MPI_DOUBLE, roots.data(), ghosts.data(), MPI_REPLACE), STF_SUCCESS, "bcast");
  int bad = 0;
  for (stf_int i = 0; i < nn; ++i)
    if (ghosts[i] != value_of(c.needed[i]) && bad++ < 3)
      ck.check(false, "needed[%d] = id %lld got %g, want %g", i, (long long)c.needed[i], ghosts[i],
               value_of(c.needed[i]));
  if (!bad) ck.pass();
  // Every needed copy counts once at its owner: the global sums agree.
  ck.code(stf_reduce(sf, MPI_DOUBLE, ones.data(), counts.data(), MPI_SUM), STF_SUCCESS, "reduce");
  double total = 0, mine = 0, all = 0;
  for (double x : counts) total += x;
  mine = nn;
  MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  ck.check(total == all, "owners counted %g needs, %g were made", total, all);
  stf_destroy(&sf);
}

// A failure that every rank must report with want and the same id named.
void refused_everywhere(Checker &ck, const Case &c, int want, const char *what, const char *named) {
  ck.context(what);
  int garbage = 0;
  stf_sf sf = reinterpret_cast<stf_sf>(&garbage);
  const int rc = stf_create_from_matching_indices(MPI_COMM_WORLD, static_cast<stf_int>(c.owned.size()),
                                                  c.owned.data(), static_cast<stf_int>(c.needed.size()),
                                                  c.needed.data(), &sf);
  ck.code(rc, want, what);
  ck.check(sf == nullptr, "a failed call left the output non-NULL");
  if (named)
    ck.check(std::strstr(stf_last_error_message(), named) != nullptr, "message \"%s\" does not name %s",
             stf_last_error_message(), named);
}

void errors(Checker &ck, std::uint64_t seed) {
  Case c = make_case(seed, 40, 10, false);
  Case missing = c;
  if (me == nranks - 1) missing.needed.push_back(id_of(1000));  // nobody owns id #1000
  if (me == 0) missing.needed.push_back(id_of(1001));
  const std::string smallest = std::to_string(std::min(id_of(1000), id_of(1001)));
  refused_everywhere(ck, missing, STF_ERR_ARG, "needed id owned by no rank", smallest.c_str());

  Case twice = c;
  if (me == 0) twice.owned.push_back(id_of(2000));
  if (me == nranks - 1) twice.owned.push_back(id_of(2000));  // on one rank: listed twice there
  refused_everywhere(ck, twice, STF_ERR_ARG, "id owned twice", std::to_string(id_of(2000)).c_str());

  ck.context("bad arguments");
  stf_sf sf = nullptr;
  const stf_gint one = 5;
  ck.code(stf_create_from_matching_indices(MPI_COMM_WORLD, me == 0 ? -1 : 0, nullptr, 0, nullptr, &sf), STF_ERR_ARG,
          "negative nowned on rank 0");
  ck.code(stf_create_from_matching_indices(MPI_COMM_WORLD, 0, nullptr, me == 0 ? 1 : 0, nullptr, &sf), STF_ERR_NULL,
          "needed NULL with nneeded 1 on rank 0");
  ck.code(stf_create_from_matching_indices(MPI_COMM_WORLD, 1, &one, 0, nullptr, nullptr), STF_ERR_NULL,
          "NULL output");
  ck.code(stf_create_from_matching_indices(MPI_COMM_NULL, 1, &one, 0, nullptr, &sf), STF_ERR_ARG, "MPI_COMM_NULL");
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  Checker ck("test_matching", argc, argv, 20251124);
  const std::uint64_t seed = ck.seed();
  data(ck, make_case(seed, 0, 0, false), "no ids at all");
  data(ck, make_case(seed, 1, 3, false), "one id, needed everywhere");
  data(ck, make_case(seed, 500, 200, true), "500 ids, rank 0 owns none");
  data(ck, make_case(hash_key(seed, 3), 5000, 3000, false), "5000 ids");
  Case own_only = make_case(hash_key(seed, 4), 300, 0, false);
  own_only.needed = own_only.owned;  // each rank needs exactly what it owns: self edges only
  data(ck, own_only, "needs its own ids");
  errors(ck, seed);
  int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
