// One message above INT_MAX bytes: 2,100 roots of a 1 MiB unit on one rank
// read by 2,100 leaves on the other (2.1 GiB in one message), moved by
// bcast REPLACE, reduce REPLACE and reduce BXOR (the unit is bytes, whose
// valid reductions are the bitwise ones) with the transport or strategy
// named by the options string in argv[1]. Every 8-byte word is checked
// against the oracle: a word pattern of (key, offset), so a lost, shifted
// or truncated block is found wherever it lies.
// Needs about 6.3 GiB on both ranks (the reduce BXOR receives into a buffer
// of 2.1 GiB): labelled bigmem, left out of sanitizer builds.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "check.h"

using namespace stft;

namespace {

constexpr std::size_t kUnit = std::size_t(1) << 20;
constexpr stf_int kCount = 2100;
constexpr std::size_t kBytes = kUnit * kCount;  // 2.1 GiB, above INT_MAX
constexpr std::size_t kWords = kBytes / 8;

// Distinct per word and key, cheap enough for 275 million words (a shifted
// or repeated block changes i, so it no longer matches).
std::uint64_t word(std::uint64_t key, std::size_t i) {
  return (i + 1) * 0x9e3779b97f4a7c15ULL ^ key * 0xbf58476d1ce4e5b9ULL;
}

void fill(std::uint64_t *p, std::uint64_t key) {
  for (std::size_t i = 0; i < kWords; i++) p[i] = word(key, i);
}

// The words of a buffer that should hold word(a) ^ word(b) (b = 0: word(a)).
void expect(Checker &ck, const std::uint64_t *p, std::uint64_t a, std::uint64_t b, const char *what) {
  std::size_t bad = 0, first = kWords;
  for (std::size_t i = 0; i < kWords; i++) {
    const std::uint64_t want = b ? word(a, i) ^ word(b, i) : word(a, i);
    if (p[i] != want && bad++ == 0) first = i;
  }
  ck.check(bad == 0, "%s: %zu of %zu words wrong, first at byte %zu", what, bad, kWords, first * 8);
}

double now() { return MPI_Wtime(); }

// Peak resident memory of this process, in MiB (VmHWM).
long peak_mib() {
  FILE *f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, "VmHWM:", 6) == 0) kib = std::atol(line + 6);
  std::fclose(f);
  return kib < 0 ? -1 : kib / 1024;
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // The options (e.g. "-stf_type window -stf_window_sync lock"); "--from 1"
  // puts the roots on rank 1 and the leaves on rank 0 (the gather pattern,
  // which the collective transports serve with MPI_Igatherv/MPI_Iscatterv).
  // "--expect TEXT": stf_view must name it (that the transport asked for,
  // not a fallback, moved the data).
  std::string options = "-stf_type basic", expect_view;
  int from = 0;
  for (int i = 1; i < argc; i++) {
    if (std::strcmp(argv[i], "--from") == 0 && i + 1 < argc) from = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--expect") == 0 && i + 1 < argc) expect_view = argv[++i];
    else if (std::strncmp(argv[i], "--", 2) != 0) options = argv[i];
  }
  int rc = 0;
  {
    Checker ck("test_bigmsg", argc, argv, 20261123);
    if (size != 2) {
      if (me == 0) std::fprintf(stderr, "test_bigmsg: needs 2 ranks\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int to = 1 - from;
    ck.context(options);
    MPI_Datatype unit;
    MPI_Type_contiguous(static_cast<int>(kUnit), MPI_BYTE, &unit);
    MPI_Type_commit(&unit);

    stf_sf sf = nullptr;
    ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "create");
    ck.code(stf_set_sf_options(sf, options.c_str()), STF_SUCCESS, "options");
    std::vector<stf_node> remote(me == to ? kCount : 0);
    for (stf_int i = 0; i < static_cast<stf_int>(remote.size()); i++) remote[i] = stf_node{from, i};
    ck.code(stf_set_graph(sf, me == from ? kCount : 0, static_cast<stf_int>(remote.size()), nullptr, STF_COPY_VALUES,
                          remote.data(), STF_COPY_VALUES),
            STF_SUCCESS, "set_graph");
    ck.code(stf_setup(sf), STF_SUCCESS, "setup");
    const std::string view = captured(ck, [&](std::FILE *f) { return stf_view(sf, f); }, "view");
    if (me == 0 && !expect_view.empty())
      ck.check(view.find(expect_view) != std::string::npos, "stf_view does not name %s:\n%s", expect_view.c_str(),
               view.c_str());

    // One 2.1 GiB array per rank: roots on `from`, leaves on `to`.
    std::vector<std::uint64_t> data(kWords);
    std::uint64_t *p = data.data();
    double t_move = 0;
    // bcast REPLACE: the leaves get the roots' words.
    if (me == from) fill(p, 1);
    else std::memset(p, 0, kBytes);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    ck.code(stf_bcast(sf, unit, me == from ? p : nullptr, me == to ? p : nullptr, MPI_REPLACE), STF_SUCCESS, "bcast REPLACE");
    t_move += now() - t0;
    if (me == to) expect(ck, p, 1, 0, "bcast REPLACE leaves");
    // reduce REPLACE: the roots get the leaves' words.
    if (me == to) fill(p, 2);
    else std::memset(p, 0, kBytes);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = now();
    ck.code(stf_reduce(sf, unit, me == to ? p : nullptr, me == from ? p : nullptr, MPI_REPLACE), STF_SUCCESS, "reduce REPLACE");
    t_move += now() - t0;
    if (me == from) expect(ck, p, 2, 0, "reduce REPLACE roots");
    // reduce BXOR: the roots (words of key 2) combined with the leaves' (key 3).
    if (me == to) fill(p, 3);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = now();
    ck.code(stf_reduce(sf, unit, me == to ? p : nullptr, me == from ? p : nullptr, MPI_BXOR), STF_SUCCESS, "reduce BXOR");
    t_move += now() - t0;
    if (me == from) expect(ck, p, 2, 3, "reduce BXOR roots");

    ck.code(stf_destroy(&sf), STF_SUCCESS, "destroy");
    MPI_Type_free(&unit);
    double move_max = 0;
    long peak = peak_mib(), peak_max = 0, peak_sum = 0;
    MPI_Reduce(&t_move, &move_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&peak, &peak_max, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&peak, &peak_sum, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0)
      std::printf("test_bigmsg [%s]: 3 operations of %zu bytes in %.2f s; peak resident memory %ld MiB on one rank, "
                  "%ld MiB on both\n",
                  options.c_str(), kBytes, move_max, peak_max, peak_sum);
    rc = ck.finish();
  }
  MPI_Finalize();
  return rc;
}
