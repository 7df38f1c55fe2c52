// A machine profile: every fitted parameter of the model layer, with where
// and when it was measured, read and written as JSON (bench/calibrate
// writes one; share/profiles/ holds examples; the fields are documented in
// docs/MODEL.md). default_profile() gives built-in values for a machine
// never calibrated, marked defaults = true.
#pragma once

#include <string>

#include "model/gpu.h"
#include "model/onesided.h"
#include "model/strategy.h"

namespace stf::model {

struct Profile {
  std::string machine;     // host name (and CPU) of the calibration run
  std::string date;        // UTC, YYYY-MM-DDTHH:MM:SSZ
  std::string mpi;         // MPI_Get_library_version's first line
  bool defaults = true;    // true: built-in values, not measured here
  int ranks = 0;           // ranks of the calibration run
  int nodes = 0;           // nodes it saw
  int ranks_per_node = 0;  // emulated nodes of this many ranks; 0: real nodes (MPI_COMM_TYPE_SHARED)
  Network network;
  OneSided onesided;
  Collective collective;
  PackRates host_pack;      // pack/unpack of host memory (launch: per call)
  std::string device_name;  // the device the device rates are of ("" when none)
  Device device;
};

// Built-in values: a node of a recent cluster as the literature reports
// them (shared memory ~0.5 us, 5-10 GB/s; an InfiniBand-class network
// ~2 us, ~12 GB/s per node; a GPU packing at hundreds of GB/s after ~5 us
// launches). Good enough to rank strategies when nothing was measured.
Profile default_profile();

// The profile as JSON (see docs/MODEL.md for the fields).
std::string profile_to_json(const Profile &p);
// Reads a profile. format and version are required; other members that
// are absent keep their built-in value;
// anything malformed (bad JSON, a wrong type, a negative or non-finite
// number, unsorted segments, another format) is an error: false, with the
// reason in *error, and *out unchanged.
bool profile_from_json(const std::string &text, Profile *out, std::string *error);

// The same from and to files; false with *error when the file cannot be
// read or written. read_profile takes a regular file of at most
// kMaxProfileBytes (a profile is a few KiB).
constexpr long long kMaxProfileBytes = 16LL << 20;
bool read_profile(const std::string &path, Profile *out, std::string *error);
bool write_profile(const std::string &path, const Profile &p, std::string *error);

}  // namespace stf::model
