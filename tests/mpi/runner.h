// Run one library operation on an SF and check it against the oracle. All
// functions here are collective over the SF's communicator and record their
// outcome in the Checker (context set by the caller).
#pragma once

#include "check.h"
#include "graphs.h"
#include "oracle.h"
#include "starforest.h"

namespace stft {

// stf_op(...), stf_op_begin + stf_op_end, or stf_op_begin + stf_test until done.
enum class Form { Blocking, Split, Polled };
inline const char *form_name(Form f) {
  return f == Form::Blocking ? "blocking" : f == Form::Split ? "begin/end" : "begin/stf_test";
}
// The form for combination number k: all three in turn.
inline Form form_of(unsigned k) { return static_cast<Form>(k % 3); }

// stf_create + options (may be NULL) + stf_set_graph(mode) + stf_setup
// (unless setup is false: the first operation then sets up implicitly).
// With STF_USE_POINTER the graph must outlive the SF. NULL on failure.
stf_sf make_sf(Checker &ck, const LocalGraph &g, MPI_Comm comm, const char *options,
               stf_copy_mode mode, bool setup = true);

void check_leaf_range(Checker &ck, stf_sf sf, const GlobalGraph &g, int me);
void run_degree(Checker &ck, stf_sf sf, const GlobalGraph &g, int me, Form form);
void run_bcast(Checker &ck, stf_sf sf, const DataGen &d, int me, Form form);
void run_reduce(Checker &ck, stf_sf sf, const DataGen &d, int me, Form form);
void run_fetch(Checker &ck, stf_sf sf, const DataGen &d, int me, Form form);
void run_gather(Checker &ck, stf_sf sf, const DataGen &d, int me, Form form);
void run_scatter(Checker &ck, stf_sf sf, const DataGen &d, int me, Form form);
// Checks the multi-SF's graph against the oracle, then moves MPI_INT data
// over it with bcast (MPI_REPLACE) and reduce (MPI_SUM) in int_unit.
void check_multi_sf(Checker &ck, stf_sf sf, const GlobalGraph &g, int me, const UnitSpec &int_unit,
                    std::uint64_t key);
// d.op is not defined for d.u: bcast, reduce and fetch_and_op (both forms)
// must return want on every rank and leave every buffer untouched.
void run_bad_op(Checker &ck, stf_sf sf, const DataGen &d, int me, int want);

// All-bytes comparison mask for a buffer that must not change at all.
inline std::vector<char> no_mask(const Buffer &b) { return std::vector<char>(b.size(), 0); }

}  // namespace stft
