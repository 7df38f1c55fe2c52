// Another way to run an SF's bcast and reduce than its transport's one
// message per peer rank: the node-aware strategies, which move the data in
// steps over SFs of their own (src/nodeaware/, a layer above this one: this
// layer declares the interface, that layer implements it and registers its
// strategies in the method table, methods.h).
// Fetch-and-op, gather and scatter keep the SF's own transport.
#pragma once

#include <memory>
#include <string>

#include "ops/operation.h"

struct stf_sf_s;

namespace stf {

// One operation in flight in a strategy; the request (request.h) points at it.
struct StrategyOp;

class Strategy {
 public:
  virtual ~Strategy() = default;
  // Begin a bcast or reduce (collective like any begin: every rank begins
  // the SF's operations in the same order). *op is what advance takes.
  virtual int begin(const OpArgs &a, const Resolved &res, StrategyOp **op) = 0;
  // Take op's steps as far as they go: to the end if wait (stf_*_end), else
  // without waiting (stf_test). *done: op finished and is free again.
  virtual int advance(StrategyOp *op, bool wait, bool *done) = 0;
  // The steps' counters added to *s (stf_get_stats), and reset.
  virtual void add_stats(stf_stats *s) const = 0;
  virtual void reset_stats() = 0;
  // For stf_view: the strategy and its step transports; this rank's steps.
  virtual std::string describe() const = 0;
  virtual std::string describe_rank() const = 0;
};

}  // namespace stf
