// The performance-model layer: pure functions (no MPI, no state) that
// predict what communication costs from a machine profile, so that other
// layers can explain and choose. Times in seconds, sizes in bytes, rates in
// bytes per second. docs/MODEL.md describes the models and the profile.
#pragma once

#include "model/gpu.h"       // pack + sync + max(send, receive) + unpack (device data)
#include "model/maxrate.h"   // several ranks of a node sending off it at once
#include "model/onesided.h"  // puts with a signal, collectives
#include "model/postal.h"    // alpha + beta n per size range, gap per message
#include "model/profile.h"   // every parameter, JSON, built-in defaults
#include "model/roofline.h"  // bandwidth bound by message size and messages per synchronisation
#include "model/strategy.h"  // standard, 2step, 3step, split costs
