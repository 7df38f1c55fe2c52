// The options every rank of an SF must give alike, checked at every set-up
// (-stf_validate 0 too: a rank might give that one otherwise). Ranks that
// differ in one of them would wait for each other in different collectives
// (another transport, another discovery, an allreduce of -stf_debug or of
// -stf_validate that the others never make) or pair operations wrongly; one
// allreduce of a fixed size, of their hashes, turns that into an error on
// every rank. Options that only change what a rank does by itself (index
// analysis, device data paths) may differ.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "sf/choice.h"
#include "sf/methods.h"
#include "sf/sf.h"

namespace stf {
namespace {

struct Shared {
  const char *what;  // for the message
  std::string value;
};

// The options of the transport or strategy named (for auto, of every
// candidate, and the profile and autotuning that choose among them), as
// "-name value" pairs. Unset options count as their fallbacks. A strategy's
// step transports check their own options when their SFs are set up.
std::string type_options(const Options &o) {
  const bool any = o.type == "auto";
  std::string s;
  std::vector<const OptionSpec *> seen;  // the strategies share theirs
  auto add = [&](const OptionSpec &spec) {
    if (&spec == &putsignal_timeout_option) return;  // how long this rank waits: its own business
    if (std::find(seen.begin(), seen.end(), &spec) != seen.end()) return;
    seen.push_back(&spec);
    s += (s.empty() ? "-" : " -") + std::string(spec.name) + " " + o.agreed_value(spec);
  };
  for (const Method &m : methods())
    if (any ? auto_candidate(m.name) || m.kind == MethodKind::chooser : o.type == m.name)
      for (const OptionSpec *spec : m.options) add(*spec);
  return s.empty() ? "(none)" : s;
}

std::vector<Shared> shared_options(const Options &o) {
  return {{"-stf_type", o.type},
          {"-stf_validate", o.validate ? "1" : "0"},
          {"-stf_twosided", twosided_name(o.twosided)},
          {"-stf_ranks_per_node", std::to_string(o.ranks_per_node)},
          {"-stf_debug", o.debug ? "1" : "0"},
          {"-stf_log_view", o.log_view ? "1" : "0"},
          {"-stf_view", o.view ? "1" : "0"},
          {"the options of -stf_type", type_options(o)}};
}

std::uint64_t fnv1a(const std::string &s) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace

int agree_on_options(stf_sf sf, int earlier) {
  constexpr std::size_t n = 8;  // shared_options' entries
  // The smallest hash of each option and the smallest complement (the
  // complement of the largest): equal everywhere only if both agree. Last,
  // the complement of this rank's error code and its rank where it failed:
  // a rank that failed before (out of memory) still takes part, and every
  // rank fails.
  std::array<std::uint64_t, 2 * n + 2> v;
  v.fill(~std::uint64_t{0});
  std::vector<Shared> mine;
  int rc = earlier;
  if (!rc) try {
      mine = shared_options(sf->opts);
      for (std::size_t i = 0; i < n; i++) {
        v[i] = fnv1a(mine.at(i).value);
        v[n + i] = ~v[i];
      }
    } catch (...) {
      rc = exception_error();  // every rank then fails before comparing a hash
    }
  // The largest code; the lowest rank that failed (no rank: a value the
  // same whether the minimum treats it as signed, as MPICH 4.0.2 does).
  v[2 * n] = ~static_cast<std::uint64_t>(rc);
  v[2 * n + 1] = rc ? static_cast<std::uint64_t>(sf->rank) : static_cast<std::uint64_t>(INT64_MAX);
  STF_MPI(MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_UINT64_T, MPI_MIN, sf->comm));
  if (rc) return rc;
  if (const int worst = static_cast<int>(~v[2 * n]))
    return set_error(worst, "set-up: rank %d failed (its message says why)", static_cast<int>(v[2 * n + 1]));
  for (std::size_t i = 0; i < n; i++)
    if (v[i] != ~v[n + i])
      return set_error(STF_ERR_OPTION,
                       "set-up: the ranks give different values of %s (rank %d: '%s'); every rank of an SF must "
                       "set them alike",
                       mine[i].what, sf->rank, mine[i].value.c_str());
  return STF_SUCCESS;
}

}  // namespace stf
