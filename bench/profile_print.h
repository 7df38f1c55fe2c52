// A fitted profile's network models printed for a reader, the same way by
// calibrate (measured here) and fit_profile (fitted from samples).
#pragma once

#include "model/model.h"

namespace bench {

// "NAME: measured, gap .. us, busy step .. us" and one line per segment.
void print_postal(const char *name, const stf::model::Postal &p);
// R_N, R_b and the pairs measured, then R_N per size where fitted so.
void print_maxrate(const stf::model::MaxRate &mr);

}  // namespace bench
