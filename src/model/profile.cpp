#include "model/profile.h"

#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "model/json.h"

namespace stf::model {

namespace {

constexpr const char *kFormat = "starforest-profile";
constexpr int kVersion = 1;

PostalSegment segment(double from, double alpha_us, double gbps) {
  return PostalSegment{from, alpha_us * 1e-6, 1 / (gbps * 1e9)};
}

}  // namespace

Profile default_profile() {
  Profile p;
  p.machine = "built-in defaults";
  p.defaults = true;
  // Shared memory: eager copies up to 64 KiB, single-copy (CMA/XPMEM) above.
  p.network.same_node.segments = {segment(0, 0.5, 5), segment(65536, 3, 10)};
  p.network.same_node.gap = 0.1e-6;
  // An InfiniBand-class network: eager up to 16 KiB, rendezvous above.
  p.network.other_node.segments = {segment(0, 2, 8), segment(16384, 5, 12)};
  p.network.other_node.gap = 0.3e-6;
  p.network.off_node.alpha = 5e-6;
  p.network.off_node.node_rate = 12e9;
  p.network.off_node.pair_rate = 10e9;
  p.onesided.sync = 1e-6;
  // The put-with-signal protocol in a node, 0.7x MPI's alpha and 1.4x its
  // copy rate to 64 KiB, 0.93x MPI above: between what two machines read.
  // calibrate on a 2-core VM fitted 0.6x MPI's alpha and 1.9x its rate; on
  // a 16-core node a ping-pong read 0.7x MPI at 8 B, 0.67x at 4 KiB and
  // 0.95x at 64 KiB. Used only on this profile (onesided.h).
  p.onesided.heap.segments = {segment(0, 0.35, 7), segment(65536, 3, 11)};
  p.collective.call = 3e-6;
  const double host[kPatterns] = {10e9, 4e9, 2e9};
  const double device[kPatterns] = {500e9, 300e9, 150e9};
  for (int k = 0; k < kPatterns; ++k) {
    p.host_pack.pack[k] = p.host_pack.unpack[k] = host[k];
    p.device.rates.pack[k] = p.device.rates.unpack[k] = device[k];
  }
  p.host_pack.launch = 0.2e-6;
  p.device.rates.launch = 5e-6;
  p.device.sync = 5e-6;
  return p;
}

// ---- writing -----------------------------------------------------------------

namespace {

Json num(double x) { return Json::number(x); }

Json node_rates_json(const std::vector<NodeRateSegment> &by_size) {
  Json segs = Json::array();
  for (const NodeRateSegment &s : by_size)
    segs.push(Json::object().set("from_bytes", num(s.from_bytes)).set("node_rate", num(s.node_rate)));
  return segs;
}

Json postal_json(const Postal &p) {
  Json segs = Json::array();
  for (const PostalSegment &s : p.segments)
    segs.push(Json::object().set("from_bytes", num(s.from_bytes)).set("alpha", num(s.alpha)).set("beta", num(s.beta)));
  return Json::object()
      .set("measured", Json::boolean(p.measured))
      .set("gap", num(p.gap))
      .set("busy_step", num(p.busy_step))
      .set("segments", segs);
}

Json rates_json(const PackRates &r) {
  Json o = Json::object().set("measured", Json::boolean(r.measured)).set("launch", num(r.launch));
  for (int k = 0; k < kPatterns; ++k)
    o.set(pattern_name(static_cast<Pattern>(k)),
          Json::object().set("pack", num(r.pack[k])).set("unpack", num(r.unpack[k])));
  return o;
}

}  // namespace

std::string profile_to_json(const Profile &p) {
  const MaxRate &m = p.network.off_node;
  Json root = Json::object();
  root.set("format", Json::string(kFormat))
      .set("version", num(kVersion))
      .set("machine", Json::string(p.machine))
      .set("date", Json::string(p.date))
      .set("mpi", Json::string(p.mpi))
      .set("defaults", Json::boolean(p.defaults))
      .set("ranks", num(p.ranks))
      .set("nodes", num(p.nodes))
      .set("ranks_per_node", num(p.ranks_per_node))
      .set("postal", Json::object()
                         .set("same_node", postal_json(p.network.same_node))
                         .set("other_node", postal_json(p.network.other_node)))
      .set("maxrate", Json::object()
                          .set("measured", Json::boolean(m.measured))
                          .set("alpha", num(m.alpha))
                          .set("node_rate", num(m.node_rate))
                          .set("pair_rate", num(m.pair_rate))
                          .set("node_gap", num(m.node_gap))
                          .set("pairs_measured", num(m.pairs_measured))
                          .set("node_rate_by_size", node_rates_json(m.by_size)))
      .set("onesided", Json::object()
                           .set("measured", Json::boolean(p.onesided.measured))
                           .set("sync", num(p.onesided.sync))
                           .set("heap", postal_json(p.onesided.heap)))
      .set("collective",
           Json::object().set("measured", Json::boolean(p.collective.measured)).set("call", num(p.collective.call)))
      .set("host_pack", rates_json(p.host_pack))
      .set("device", Json::object()
                         .set("name", Json::string(p.device_name))
                         .set("measured", Json::boolean(p.device.measured))
                         .set("sync", num(p.device.sync))
                         .set("rates", rates_json(p.device.rates)));
  return root.dump();
}

// ---- reading -----------------------------------------------------------------

namespace {

// Reads members of one object into fields, each only when present; the
// first problem is kept with its path ("postal.same_node.gap: ...").
class Reader {
 public:
  Reader(const Json *obj, std::string path, std::string *error) : obj_(obj), path_(std::move(path)), error_(error) {}

  bool ok() const { return error_->empty(); }

  void number(const char *key, double *out) {
    const Json *v = member(key);
    if (!v) return;
    if (!v->is(Json::Kind::number)) return fail(key, "expected a number");
    const double x = v->as_number();
    if (!std::isfinite(x) || x < 0) return fail(key, "expected a finite number >= 0");
    *out = x;
  }

  void integer(const char *key, int *out) {
    double x = *out;
    number(key, &x);
    if (!ok()) return;
    if (x != std::floor(x) || x > 1e9) return fail(key, "expected a whole number");
    *out = static_cast<int>(x);
  }

  void boolean(const char *key, bool *out) {
    const Json *v = member(key);
    if (!v) return;
    if (!v->is(Json::Kind::boolean)) return fail(key, "expected true or false");
    *out = v->as_bool();
  }

  void string(const char *key, std::string *out) {
    const Json *v = member(key);
    if (!v) return;
    if (!v->is(Json::Kind::string)) return fail(key, "expected a string");
    *out = v->as_string();
  }

  // A nested object's reader; absent: a reader that reads nothing.
  Reader object(const char *key) {
    const Json *v = member(key);
    if (v && !v->is(Json::Kind::object)) {
      fail(key, "expected an object");
      v = nullptr;
    }
    return Reader(v, path_ + key + ".", error_);
  }

  const Json *array(const char *key) {
    const Json *v = member(key);
    if (v && !v->is(Json::Kind::array)) {
      fail(key, "expected an array");
      return nullptr;
    }
    return v;
  }

  void fail(const std::string &key, const char *what) {
    if (error_->empty()) *error_ = path_ + key + ": " + what;
  }

 private:
  const Json *member(const char *key) const { return ok() && obj_ ? obj_->find(key) : nullptr; }

  const Json *obj_;
  std::string path_;
  std::string *error_;
};

// Optional (profiles before it have one node rate for every size).
void read_node_rates(Reader r, std::vector<NodeRateSegment> *by_size, std::string *error) {
  const Json *segs = r.array("node_rate_by_size");
  if (!segs || !r.ok()) return;
  std::vector<NodeRateSegment> out;
  for (size_t i = 0; i < segs->items().size(); ++i) {
    const Json &item = segs->items()[i];
    const std::string at = "node_rate_by_size[" + std::to_string(i) + "]";
    if (!item.is(Json::Kind::object)) return r.fail(at, "expected an object");
    Reader s(&item, "maxrate." + at + ".", error);
    NodeRateSegment seg;
    s.number("from_bytes", &seg.from_bytes);
    s.number("node_rate", &seg.node_rate);
    if (!s.ok()) return;
    if (seg.node_rate <= 0) return r.fail(at, "node_rate must be positive");
    if (!out.empty() && seg.from_bytes <= out.back().from_bytes) return r.fail(at, "from_bytes must grow");
    out.push_back(seg);
  }
  *by_size = out;
}

void read_postal(Reader r, Postal *p, std::string *error, const std::string &path) {
  r.boolean("measured", &p->measured);
  r.number("gap", &p->gap);
  r.number("busy_step", &p->busy_step);
  const Json *segs = r.array("segments");
  if (!segs || !r.ok()) return;
  std::vector<PostalSegment> out;
  for (size_t i = 0; i < segs->items().size(); ++i) {
    const Json &item = segs->items()[i];
    const std::string at = "segments[" + std::to_string(i) + "]";
    if (!item.is(Json::Kind::object)) return r.fail(at, "expected an object");
    Reader s(&item, path + at + ".", error);
    PostalSegment seg;
    s.number("from_bytes", &seg.from_bytes);
    s.number("alpha", &seg.alpha);
    s.number("beta", &seg.beta);
    if (!s.ok()) return;
    if (out.empty() ? seg.from_bytes != 0 : seg.from_bytes <= out.back().from_bytes)
      return r.fail(at, "segments must start at 0 bytes and grow");
    out.push_back(seg);
  }
  if (out.empty()) return r.fail("segments", "expected at least one segment");
  p->segments = out;
}

void read_rates(Reader r, PackRates *p) {
  r.boolean("measured", &p->measured);
  r.number("launch", &p->launch);
  for (int k = 0; k < kPatterns; ++k) {
    Reader pat = r.object(pattern_name(static_cast<Pattern>(k)));
    pat.number("pack", &p->pack[k]);
    pat.number("unpack", &p->unpack[k]);
  }
}

}  // namespace

bool profile_from_json(const std::string &text, Profile *out, std::string *error) {
  std::string err;
  Json root;
  if (!parse_json(text, &root, &err)) {
    if (error) *error = err;
    return false;
  }
  if (!root.is(Json::Kind::object)) {
    if (error) *error = "a profile is a JSON object";
    return false;
  }
  Profile p = default_profile();
  Reader r(&root, "", &err);
  std::string format;
  double version = 0;
  r.string("format", &format);
  r.number("version", &version);
  if (r.ok() && format != kFormat) r.fail("format", "not a starforest profile (expected \"starforest-profile\")");
  if (r.ok() && version != kVersion) r.fail("version", "unknown version (this library reads version 1)");
  r.string("machine", &p.machine);
  r.string("date", &p.date);
  r.string("mpi", &p.mpi);
  r.boolean("defaults", &p.defaults);
  r.integer("ranks", &p.ranks);
  r.integer("nodes", &p.nodes);
  r.integer("ranks_per_node", &p.ranks_per_node);
  Reader postal = r.object("postal");
  read_postal(postal.object("same_node"), &p.network.same_node, &err, "postal.same_node.");
  read_postal(postal.object("other_node"), &p.network.other_node, &err, "postal.other_node.");
  Reader m = r.object("maxrate");
  m.boolean("measured", &p.network.off_node.measured);
  m.number("alpha", &p.network.off_node.alpha);
  m.number("node_rate", &p.network.off_node.node_rate);
  m.number("pair_rate", &p.network.off_node.pair_rate);
  m.number("node_gap", &p.network.off_node.node_gap);
  m.integer("pairs_measured", &p.network.off_node.pairs_measured);
  read_node_rates(m, &p.network.off_node.by_size, &err);
  Reader o = r.object("onesided");
  o.boolean("measured", &p.onesided.measured);
  o.number("sync", &p.onesided.sync);
  read_postal(o.object("heap"), &p.onesided.heap, &err, "onesided.heap.");
  Reader c = r.object("collective");
  c.boolean("measured", &p.collective.measured);
  c.number("call", &p.collective.call);
  read_rates(r.object("host_pack"), &p.host_pack);
  Reader d = r.object("device");
  d.string("name", &p.device_name);
  d.boolean("measured", &p.device.measured);
  d.number("sync", &p.device.sync);
  read_rates(d.object("rates"), &p.device.rates);
  if (!err.empty()) {
    if (error) *error = err;
    return false;
  }
  *out = p;
  return true;
}

// A profile is a regular file of at most kMaxProfileBytes: a device, a FIFO
// or a file that grows without end (/dev/zero) is refused before it is read.
bool read_profile(const std::string &path, Profile *out, std::string *error) {
  auto refuse = [&](const std::string &why) {
    if (error) *error = path + ": " + why;
    return false;
  };
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return refuse("cannot be read");
  if (!S_ISREG(st.st_mode)) return refuse("is not a regular file");
  if (st.st_size > kMaxProfileBytes)
    return refuse("has " + std::to_string(st.st_size) + " bytes, more than a profile's " +
                  std::to_string(kMaxProfileBytes));
  std::ifstream f(path, std::ios::binary);
  if (!f) return refuse("cannot be read");
  std::string text(static_cast<std::size_t>(st.st_size) + 1, '\0');  // one byte more: a file that grew since
  f.read(&text[0], static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(f.gcount()));
  if (text.size() > static_cast<std::size_t>(st.st_size)) return refuse("changed while it was read");
  std::string err;
  if (!profile_from_json(text, out, &err)) {
    if (error) *error = path + ": " + err;
    return false;
  }
  return true;
}

bool write_profile(const std::string &path, const Profile &p, std::string *error) {
  std::ofstream f(path);
  f << profile_to_json(p);
  f.close();
  if (!f) {
    if (error) *error = path + ": cannot be written";
    return false;
  }
  return true;
}

}  // namespace stf::model
